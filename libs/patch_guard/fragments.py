"""Forbidden constructs of a hunk's lines when the whole file is not known (no workspace, or a file that
does not apply): the weaker, fail-closed fallback of :mod:`libs.patch_guard.ast_rules`.

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

from pydantic import BaseModel, ConfigDict

from libs.patch_guard.ast_rules import ConstructFinding, forbidden_constructs
from libs.patch_guard.constructs import Category

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


def scan_lines(numbered: Sequence[tuple[int, str]], categories: Collection[Category]) -> FragmentScan:
    """Findings of the lines (line number, text), one run of consecutive line numbers at a time."""
    findings: list[ConstructFinding] = []
    unverifiable: list[UnverifiableLine] = []
    for run in _runs(numbered):
        run_findings, run_unverifiable = _scan_run(run, categories)
        findings.extend(run_findings)
        unverifiable.extend(run_unverifiable)
    return FragmentScan(findings=tuple(findings), unverifiable=tuple(unverifiable))


def _scan_run(
    run: list[tuple[int, str]], categories: Collection[Category]
) -> tuple[list[ConstructFinding], list[UnverifiableLine]]:
    for number, text in run:
        if '"""' in text or "'''" in text or text.rstrip("\r").endswith("\\"):
            reason = "a multi-line string or a line continuation cannot be read without the whole file"
            return [], [UnverifiableLine(line=number, reason=reason)]
    first = run[0][0]
    tree = _parse_block([text for _, text in run])
    if tree is not None:
        return _shifted(forbidden_constructs(tree, categories), first), []
    findings: list[ConstructFinding] = []
    unverifiable: list[UnverifiableLine] = []
    for number, text in run:
        if not text.strip() or text.strip().startswith("#"):
            continue
        tree = _parse_line(text)
        if tree is None:
            unverifiable.append(UnverifiableLine(line=number, reason="does not parse on its own"))
        else:
            findings.extend(_shifted(forbidden_constructs(tree, categories), number))
    return findings, unverifiable


def _parse_block(lines: list[str]) -> ast.Module | None:
    source = textwrap.dedent("".join(f"{line}\n" for line in lines))
    for candidate in _completions(source):
        try:
            return ast.parse(candidate)
        except (SyntaxError, ValueError):
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


def _shifted(findings: list[ConstructFinding], first_line: int) -> list[ConstructFinding]:
    return [finding.model_copy(update={"line": first_line + finding.line - 1}) for finding in findings]


def _runs(numbered: Sequence[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    run: list[tuple[int, str]] = []
    for number, text in numbered:
        if run and number != run[-1][0] + 1:
            yield run
            run = []
        run.append((number, text))
    if run:
        yield run
