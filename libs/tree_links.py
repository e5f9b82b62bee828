"""Where the links of a tree lead once they are all in place, found before any of them is written.

Checking each link on its own, against the path its text names, is not enough: a link is followed through the
tree's other links, and a `..` after one of them climbs from where that link leads, not from where its name is.
`p/q/up -> ../..` leads to the tree's root, and `e -> p/q/up/..` then leads to the root's parent, though both texts
stay inside the tree when read alone. So every link is followed here as the kernel follows it: component by
component, each link met replaced by its target, read from the folder that link is in; a `..` at the root leaves
the tree. A link that would take more than `MAX_HOPS` links to follow (a loop) counts as leaving: the kernel gives
up on it too (ELOOP), and no tree a repository needs holds one.

The tree is the one described (the archive's members), not a folder on disk: a component no member names is read
as a plain name, which is what a fresh, empty destination gives.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from pathlib import PurePosixPath

MAX_HOPS = 40
"""Links followed for one path before it counts as a loop (Linux's MAXSYMLINKS)."""


def tree_name(name: str) -> str:
    """A member's name as the tree's links are keyed: its parts joined by `/` (no `./`, no trailing `/`)."""
    return "/".join(PurePosixPath(name).parts)


def leads_inside(name: str, links: Mapping[str, str]) -> bool:
    """Whether the path `name` (relative to the tree's root), followed through `links` (each link's tree name to
    its target text), stays inside the tree."""
    remaining = deque(PurePosixPath(name).parts)
    here: list[str] = []
    hops = 0
    while remaining:
        part = remaining.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                return False
            here.pop()
            continue
        target = links.get("/".join([*here, part]))
        if target is None:
            here.append(part)
            continue
        hops += 1
        if hops > MAX_HOPS or not target or target.startswith("/") or "\x00" in target:
            return False
        remaining.extendleft(reversed(target.split("/")))  # read from the link's own folder: `here`
    return True


def first_link_leaving(links: Mapping[str, str]) -> tuple[str, str] | None:
    """The first link, in the mapping's order, that leads out of the tree (or loops), as (name, target); None when
    every link leads inside it."""
    for name, target in links.items():
        if not leads_inside(name, links):
            return name, target
    return None
