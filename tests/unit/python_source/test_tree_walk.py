"""One walk per tree: the same nodes in the same order as ``ast.walk``, the same parents as a fresh map, read-only,
the nodes of given kinds as a filter of the walk gives them, and nothing kept once the tree is gone."""

from __future__ import annotations

import ast
import gc
import os
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.python_source.tree_walk import NodeKinds, nodes_of, parents_of, walked
from libs.python_source.untrusted_parsing import parse_module

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted((ROOT / "fixtures" / "repos").rglob("*.py"))[:60] + sorted(
    (ROOT / "libs" / "patch_guard").glob("*.py")
)


def test_there_are_sources_to_compare() -> None:
    assert len(SOURCES) > 40


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_walk_and_the_parents_are_the_ones_a_fresh_walk_gives(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fresh = list(ast.walk(tree))
    assert list(walked(tree)) == fresh and walked(tree) is walked(tree)
    expected = {child: parent for parent in fresh for child in ast.iter_child_nodes(parent)}
    assert dict(parents_of(tree)) == expected and tree not in parents_of(tree)
    for inner in [node for node in fresh if isinstance(node, ast.stmt)][:3]:  # a subtree has its own walk
        assert list(walked(inner)) == list(ast.walk(inner))


def test_the_parents_cannot_be_changed_by_a_reader() -> None:
    tree = ast.parse("x = f(y)\n")
    with pytest.raises(TypeError):
        parents_of(tree)[tree] = tree  # type: ignore[index]


def test_another_tree_of_the_same_text_is_walked_on_its_own_and_a_dead_tree_is_freed_with_its_walk() -> None:
    first, second = ast.parse("a = b + c\n"), ast.parse("a = b + c\n")

    def own(tree: ast.AST) -> set[int]:  # contexts and operators (Load, Add...) are singletons every tree shares
        return {id(node) for node in walked(tree) if node._fields}

    assert own(first).isdisjoint(own(second))
    parents_of(first)
    gone = weakref.ref(first)
    del first
    gc.collect()
    assert gone() is None


def test_the_kept_walk_changes_nothing_the_tree_compiles_dumps_or_unparses_to() -> None:
    text = "import os\nx = [os.sep for _ in range(3)]\n"
    plain, walked_tree = ast.parse(text), ast.parse(text)
    parents_of(walked_tree)
    assert ast.dump(walked_tree, include_attributes=True) == ast.dump(plain, include_attributes=True)
    assert ast.unparse(walked_tree) == ast.unparse(plain)
    namespace: dict[str, object] = {}
    exec(compile(walked_tree, "<walked>", "exec"), namespace)
    assert namespace["x"] == [os.sep] * 3


KINDS: list[NodeKinds] = [
    ast.Name,
    ast.stmt,
    ast.expr,
    ast.Import | ast.ImportFrom,
    ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.arg,
    (ast.Attribute, ast.Call, ast.Constant),
    ast.stmt | ast.ExceptHandler | ast.match_case,
    ast.expr_context,
]


@pytest.mark.parametrize("path", SOURCES[::4], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_nodes_of_some_kinds_are_the_walks_nodes_of_those_kinds_in_its_order(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fresh = list(ast.walk(tree))
    for kinds in KINDS:
        assert list(nodes_of(tree, kinds)) == [node for node in fresh if isinstance(node, kinds)], kinds
        assert nodes_of(tree, kinds) is nodes_of(tree, kinds)


@pytest.mark.parametrize("path", SOURCES[::4], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_parsed_trees_walk_and_parents_are_kept_from_the_depth_walk_and_are_a_fresh_walks(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = parse_module(path.read_text(encoding="utf-8"))
    walk, parents = walked(tree), parents_of(tree)
    fresh = list(ast.walk(tree))
    assert list(walk) == fresh
    expected = {child: parent for parent in fresh for child in ast.iter_child_nodes(parent)}
    assert list(parents.items()) == list(expected.items())
    counted: list[ast.AST] = []
    original = ast.iter_child_nodes

    def counting(node: ast.AST) -> Iterator[ast.AST]:
        counted.append(node)
        return original(node)

    monkeypatch.setattr(ast, "iter_child_nodes", counting)
    assert walked(tree) is walk and parents_of(tree) is parents
    assert not counted, "neither walked again"
