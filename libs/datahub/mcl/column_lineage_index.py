"""Column-level lineage (from ``fineGrainedLineages``), grouped by the aspect that declared each pair.

Columns are ``(dataset urn, simple field path)``; the empty path stands for the whole dataset. Besides
the downstream adjacency, the index knows which columns of a dataset have *declared* upstreams: a column
that appears as a downstream in some fine-grained lineage has its sources listed, a column that never
does has unknown sources (the field-level walk treats those conservatively).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from libs.datahub.mcl.aspect_facts import ColumnPair
from libs.datahub.mcl.schema_field_urn import Column


class ColumnLineageIndex:
    def __init__(self) -> None:
        self._downstream: dict[Column, list[Column]] = {}
        self._declared_paths: dict[str, Counter[str]] = {}
        self._declared: dict[tuple[str, str], tuple[ColumnPair, ...]] = {}
        self._declared_aspects: dict[str, set[str]] = {}

    def downstream(self, column: Column) -> list[Column]:
        return self._downstream.get(column, [])

    def declared_paths(self, dataset_urn: str) -> frozenset[str]:
        """Paths of the dataset's columns whose upstream columns some fine-grained lineage declares."""
        return frozenset(self._declared_paths.get(dataset_urn, ()))

    @property
    def pair_count(self) -> int:
        return sum(len(pairs) for pairs in self._declared.values())

    def replace(self, urn: str, aspect_name: str, pairs: Iterable[ColumnPair]) -> None:
        self.remove(urn, aspect_name)
        kept = tuple(pairs)
        if not kept:
            return
        for upstream, downstream in kept:
            self._downstream.setdefault(upstream, []).append(downstream)
            self._declared_paths.setdefault(downstream[0], Counter())[downstream[1]] += 1
        self._declared[(urn, aspect_name)] = kept
        self._declared_aspects.setdefault(urn, set()).add(aspect_name)

    def remove(self, urn: str, aspect_name: str) -> None:
        pairs = self._declared.pop((urn, aspect_name), None)
        if pairs is None:
            return
        self._declared_aspects[urn].discard(aspect_name)
        for upstream, downstream in pairs:
            targets = self._downstream[upstream]
            targets.remove(downstream)
            if not targets:
                del self._downstream[upstream]
            paths = self._declared_paths[downstream[0]]
            paths[downstream[1]] -= 1
            if paths[downstream[1]] <= 0:
                del paths[downstream[1]]
            if not paths:
                del self._declared_paths[downstream[0]]

    def remove_entity(self, urn: str) -> None:
        for aspect_name in list(self._declared_aspects.get(urn, ())):
            self.remove(urn, aspect_name)
