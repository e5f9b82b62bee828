"""Entity-level lineage as adjacency lists of ints, grouped by the aspect that declared each edge.

Urns are interned to ints once; ``downstream[i]`` lists the ints one lineage hop downstream of ``i`` in
data-flow order. Every edge is recorded under the (entity, aspect) that declared it, so an UPSERT of an
aspect replaces exactly that aspect's edges and a DELETE removes them. Each adjacency list is kept sorted
by (entity kind, urn) at insertion: walks need no sorting, visit ML features before jobs (so a path to a
model goes through the feature when one exists) and are deterministic after a reload.

Soft-deleted entities (``status.removed``) stay in the index but are flagged; walks skip them.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable

from libs.datahub.mcl.aspect_facts import LineagePair

# Entity kinds, in the order a walk prefers them.
KIND_FEATURE = 0
KIND_DATASET = 1
KIND_JOB = 2
KIND_MODEL = 3
KIND_OTHER = 4

_KIND_BY_PREFIX = (
    ("urn:li:mlFeature:", KIND_FEATURE),
    ("urn:li:mlPrimaryKey:", KIND_FEATURE),
    ("urn:li:dataset:", KIND_DATASET),
    ("urn:li:dataJob:", KIND_JOB),
    ("urn:li:dataProcessInstance:", KIND_JOB),
    ("urn:li:mlModel:", KIND_MODEL),
)


def kind_of_urn(urn: str) -> int:
    for prefix, kind in _KIND_BY_PREFIX:
        if urn.startswith(prefix):
            return kind
    return KIND_OTHER


class LineageIndex:
    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._urns: list[str] = []
        self._kinds = bytearray()
        self._downstream: list[list[int]] = []
        self._declared: dict[tuple[int, str], tuple[int, ...]] = {}
        self._declared_aspects: dict[int, set[str]] = {}
        self._removed: set[int] = set()
        self._edge_count = 0

    # --- nodes -----------------------------------------------------------------------------------------

    def intern(self, urn: str) -> int:
        node = self._ids.get(urn)
        if node is None:
            node = len(self._urns)
            self._ids[urn] = node
            self._urns.append(urn)
            self._kinds.append(kind_of_urn(urn))
            self._downstream.append([])
        return node

    def id_of(self, urn: str) -> int | None:
        return self._ids.get(urn)

    def urn_of(self, node: int) -> str:
        return self._urns[node]

    def kind_of(self, node: int) -> int:
        return self._kinds[node]

    @property
    def kinds(self) -> bytearray:
        """Kind per node id (read-only use: walks index it directly)."""
        return self._kinds

    @property
    def node_count(self) -> int:
        return len(self._urns)

    @property
    def edge_count(self) -> int:
        return self._edge_count

    def set_removed(self, urn: str, removed: bool) -> None:
        node = self.intern(urn)
        if removed:
            self._removed.add(node)
        else:
            self._removed.discard(node)

    def is_removed(self, node: int) -> bool:
        return node in self._removed

    @property
    def removed(self) -> set[int]:
        """Ids of soft-deleted entities (read-only use)."""
        return self._removed

    # --- edges -----------------------------------------------------------------------------------------

    def downstream(self, node: int) -> list[int]:
        """Ids one hop downstream (read-only; sorted by kind then urn; may repeat if two aspects declare it)."""
        return self._downstream[node]

    def replace(self, urn: str, aspect_name: str, pairs: Iterable[LineagePair]) -> None:
        """Make ``pairs`` the only edges declared by ``aspect_name`` of ``urn``."""
        self.remove(urn, aspect_name)
        flat: list[int] = []
        for upstream, downstream in pairs:
            up, down = self.intern(upstream), self.intern(downstream)
            insort(self._downstream[up], down, key=self._order_key)
            flat += (up, down)
        if flat:
            declarer = self.intern(urn)
            self._declared[(declarer, aspect_name)] = tuple(flat)
            self._declared_aspects.setdefault(declarer, set()).add(aspect_name)
            self._edge_count += len(flat) // 2

    def remove(self, urn: str, aspect_name: str) -> None:
        declarer = self._ids.get(urn)
        if declarer is None:
            return
        flat = self._declared.pop((declarer, aspect_name), None)
        if flat is None:
            return
        self._declared_aspects[declarer].discard(aspect_name)
        for position in range(0, len(flat), 2):
            self._downstream[flat[position]].remove(flat[position + 1])
        self._edge_count -= len(flat) // 2

    def remove_entity(self, urn: str) -> None:
        """Drop every edge the entity's own aspects declared (edges other entities declare to it stay)."""
        declarer = self._ids.get(urn)
        if declarer is None:
            return
        for aspect_name in list(self._declared_aspects.get(declarer, ())):
            self.remove(urn, aspect_name)
        self._removed.discard(declarer)

    def _order_key(self, node: int) -> tuple[int, str]:
        return self._kinds[node], self._urns[node]
