"""A hunk's lines read as Python when the whole file is not known (no workspace, or a file that does not
apply): the weaker, fail-closed fallback of every check on the syntax tree (forbidden constructs here, the
allow-list of new code and the always-refused constructs in :mod:`libs.patch_guard.code_checks`).

Each run of consecutive added lines is parsed on its own (dedented, a block opener completed with
``pass``, an ``elif``/``else``/``except`` given its head), else line by line (also inside brackets or a
call, for an argument of a longer expression). Context lines are never used: a context line that closes a
string would, read alone, open one and hide the added lines inside it. For the same reason a run with a
triple quote or a line continuation cannot be read alone and is reported as unverifiable, as is any line
that does not parse; an unverifiable line refuses the patch. Alias resolution sees only the run, so
``o.system(...)`` with ``import os as o`` outside the hunk is missed: give the guard the workspace.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from libs.patch_guard.ast_rules import ConstructFinding, forbidden_constructs
from libs.patch_guard.constructs import Category
from libs.python_source.untrusted_parsing import parse_module

LINE_WRAPPERS = ("{}", "({})", "[{}]", "{{{}}}", "f({})")
DANGLING_ELIF = re.compile(r"^elif\b")
DANGLING_ELSE = re.compile(r"^else\s*:")
DANGLING_HANDLER = re.compile(r"^(except\b|finally\s*:)")


class UnverifiableLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    line: int
    reason: str


class FragmentScan(BaseModel):
    model_config = ConfigDict(frozen=True)

    findings: tuple[ConstructFinding, ...]
    unverifiable: tuple[UnverifiableLine, ...]


@dataclass(frozen=True)
class Fragment:
    """A piece of a hunk parsed on its own; its line 1 is line ``first_line`` of the file."""

    first_line: int
    tree: ast.Module

    def file_line(self, line: int) -> int:
        return self.first_line + line - 1


@dataclass(frozen=True)
class FragmentParse:
    fragments: tuple[Fragment, ...]
    unverifiable: tuple[UnverifiableLine, ...]


def parse_fragments(numbered: Sequence[tuple[int, str]], *, strict: bool = True) -> FragmentParse:
    """The lines (line number, text) parsed one run of consecutive line numbers at a time, else one line at
    a time; what cannot be read is unverifiable. ``strict=False`` reads runs with a triple quote or a line
    continuation too, line by line: for the old side of hunks, which only tells what the module already
    has (a misread there hides a line, or reads a string's text as code)."""
    fragments: list[Fragment] = []
    unverifiable: list[UnverifiableLine] = []
    for run in _runs(numbered):
        run_fragments, run_unverifiable = _parse_run(run, strict)
        fragments.extend(run_fragments)
        unverifiable.extend(run_unverifiable)
    return FragmentParse(fragments=tuple(fragments), unverifiable=tuple(unverifiable))


def scan_lines(numbered: Sequence[tuple[int, str]], categories: Collection[Category]) -> FragmentScan:
    """Forbidden constructs of the lines (line number, text)."""
    parsed = parse_fragments(numbered)
    findings = [
        finding.model_copy(update={"line": fragment.file_line(finding.line)})
        for fragment in parsed.fragments
        for finding in forbidden_constructs(fragment.tree, categories)
    ]
    return FragmentScan(findings=tuple(findings), unverifiable=parsed.unverifiable)


def _parse_run(run: list[tuple[int, str]], strict: bool) -> tuple[list[Fragment], list[UnverifiableLine]]:
    for number, text in run:
        if '"""' in text or "'''" in text or text.rstrip("\r").endswith("\\"):
            if not strict:
                return _parse_lines(run)
            reason = "a multi-line string or a line continuation cannot be read without the whole file"
            return [], [UnverifiableLine(line=number, reason=reason)]
    tree = _parse_block([text for _, text in run])
    if tree is not None:
        return [Fragment(first_line=run[0][0], tree=tree)], []
    return _parse_lines(run)


def _parse_lines(run: list[tuple[int, str]]) -> tuple[list[Fragment], list[UnverifiableLine]]:
    fragments: list[Fragment] = []
    unverifiable: list[UnverifiableLine] = []
    for number, text in run:
        if not text.strip() or text.strip().startswith("#"):
            continue
        tree = _parse_line(text)
        if tree is None:
            unverifiable.append(UnverifiableLine(line=number, reason="does not parse on its own"))
        else:
            fragments.append(Fragment(first_line=number, tree=tree))
    return fragments, unverifiable


def _parse_block(lines: list[str]) -> ast.Module | None:
    source = textwrap.dedent("".join(f"{line}\n" for line in lines))
    for candidate in _completions(source):
        try:
            return parse_module(candidate)
        except SyntaxError:
            continue
    return None


def _parse_line(text: str) -> ast.Module | None:
    stripped = text.strip()
    for wrapper in LINE_WRAPPERS:
        tree = _parse_block([wrapper.format(stripped)])
        if tree is not None:
            return tree
    return None


def _completions(source: str) -> Iterator[str]:
    """``source`` as it is, and with a head for a dangling ``elif``/``else``/``except``/``finally``; each
    also with a ``pass`` body for a dangling block opener."""
    head = source.lstrip()
    heads = [source]
    if DANGLING_ELIF.match(head):
        heads.append("if" + head[len("elif") :])
    elif DANGLING_ELSE.match(head):
        heads.append("if True" + head[len("else") :])
    elif DANGLING_HANDLER.match(head):
        heads.append("try:\n    pass\n" + head)
    for candidate in heads:
        yield candidate
        last = candidate.rstrip("\n").split("\n")[-1]
        if last.rstrip().endswith(":"):
            indent = len(last) - len(last.lstrip())
            yield candidate + " " * (indent + 4) + "pass\n"


def _runs(numbered: Sequence[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    run: list[tuple[int, str]] = []
    for number, text in numbered:
        if run and number != run[-1][0] + 1:
            yield run
            run = []
        run.append((number, text))
    if run:
        yield run
