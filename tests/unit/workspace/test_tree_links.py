"""Links followed through each other as the kernel follows them (`libs/tree_links.py`), compared with the kernel
itself: the same links written to a folder, each one resolved by `os.path.realpath`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from libs.tree_links import MAX_HOPS, first_link_leaving, leads_inside

CASES = {
    "alone inside": {"a": "b"},
    "alone to the root": {"p/q/up": "../.."},
    "alone out": {"p/up": "../.."},
    "through another, out": {"p/q/up": "../..", "e": "p/q/up/.."},
    "through another, inside": {"p/q/up": "../..", "e": "p/q/up/p"},
    "through two, out": {"p/q/up": "../..", "p/r": "q/up", "e": "p/r/.."},
    "dot parts": {"p/q/a": "./../../p/./q"},
}


@pytest.mark.parametrize("links", CASES.values(), ids=CASES.keys())
def test_each_link_leads_where_the_kernel_takes_it(links: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "box" / "tree"
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(target)
    real_root = os.path.realpath(root)
    for name in links:
        kernel = os.path.realpath(root / name)
        inside = kernel == real_root or kernel.startswith(real_root + os.sep)
        assert leads_inside(name, links) == inside, name


@pytest.mark.parametrize("target", ["", "/etc/passwd", "a\x00b"])
def test_a_target_no_tree_can_hold_leads_out(target: str) -> None:
    assert not leads_inside("a", {"a": target})


def test_a_loop_or_a_chain_longer_than_the_kernel_follows_leads_out() -> None:
    assert first_link_leaving({"a": "b", "b": "a"}) == ("a", "b")
    chain = {f"l{n}": f"l{n + 1}" for n in range(MAX_HOPS + 1)}
    assert not leads_inside("l0", chain) and leads_inside(f"l{MAX_HOPS // 2}", chain)
    assert first_link_leaving({"x": "y"}) is None
