"""Entity-level downstream walk over a :class:`LineageIndex`: breadth first, so each model's path is a
shortest one (through an ML feature when there is a choice: adjacency lists put features first)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from libs.datahub.mcl.lineage_index import KIND_MODEL, LineageIndex

DEFAULT_MAX_VISITED = 250_000


@dataclass(frozen=True)
class ModelHits:
    paths: dict[int, tuple[int, ...]]
    """model id -> node ids from the start to the model."""
    truncated: bool = False


def downstream_models(index: LineageIndex, start: int, max_visited: int = DEFAULT_MAX_VISITED) -> ModelHits:
    """Every non-removed model downstream of ``start`` (not ``start`` itself), with a shortest path each."""
    parent = {start: -1}
    queue = deque((start,))
    kinds, removed = index.kinds, index.removed
    models: list[int] = []
    truncated = False
    while queue:
        node = queue.popleft()
        for neighbour in index.downstream(node):
            if neighbour in parent or neighbour in removed:
                continue
            parent[neighbour] = node
            if kinds[neighbour] == KIND_MODEL:
                models.append(neighbour)
            queue.append(neighbour)
        if len(parent) > max_visited:
            truncated = True
            break
    return ModelHits({model: _path_to(parent, model) for model in models}, truncated)


def _path_to(parent: dict[int, int], node: int) -> tuple[int, ...]:
    path = [node]
    while (node := parent[node]) != -1:
        path.append(node)
    return tuple(reversed(path))
