"""Every reader of a workspace's Python agrees on a file whose bytes are not plain UTF-8: the diagnoser's evidence
(function diff, change units, import closure, column reads, literal sites), the validator's test targeting, the
repairer and the patch guard. Python's rule (PEP 263) decides: a file Python reads by its coding declaration is read
as Python reads it, so a real change in it is a code change; one Python refuses is unreadable to every reader, with
the same reason, and no reader sees replacement characters (U+FFFD).

Before, the function diff decoded such a file with replacement characters and compared mangled text, while every
other reader called a Latin-1 file with a coding declaration unreadable."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.patch_guard.file_images import Unreadable, read_workspace_text
from libs.python_source.source_encoding import UnreadableSource, decode_source
from services.diagnoser.code_diff import diff_trees
from services.diagnoser.experiments.change_units import change_units
from services.diagnoser.experiments.tree_assembly import assemble_tree
from services.diagnoser.extractors.config_change import config_change_evidence
from services.diagnoser.extractors.read_columns import text_mentions
from services.diagnoser.import_closure import command_files
from services.diagnoser.revision_functions import RevisionFunctions
from services.repairer.source_tree import SourceTree
from services.repairer.strategies.outcome import StrategyRefusal
from services.repairer.strategies.revert_change import revert_file
from services.validator.targeting import imported_modules
from tests.unit.python_source.encoding_cases import CASES, CHANGED_FUNCTION, NON_UTF8_READABLE, EncodingCase

MODULE = "pkg/mod.py"


def _workspace(tmp_path: Path, case: EncodingCase) -> tuple[Path, Path]:
    base, candidate = tmp_path / "base", tmp_path / "candidate"
    for root, is_candidate in ((base, False), (candidate, True)):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_bytes(b"")
        (root / "pkg" / "helper.py").write_bytes(b"def scale(x):\n    return 1\n")
        (root / MODULE).write_bytes(case.raw(candidate=is_candidate))
    return base, candidate


def _reason(raw: bytes) -> str:
    with pytest.raises(UnreadableSource) as refused:
        decode_source(raw)
    return refused.value.reason


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_diagnosis_readers_agree(tmp_path: Path, case: EncodingCase) -> None:
    base, candidate = _workspace(tmp_path, case)
    raw = case.raw(candidate=True)
    readable = case.readable is not None

    diff = diff_trees(base, candidate)
    assert [changed.path for changed in diff.changed_files] == [MODULE]
    assert "\ufffd" not in diff.unified_diff
    assert [(change.qualified_name, change.status) for change in diff.function_changes] == (
        [(CHANGED_FUNCTION, "modified")] if readable else []
    )
    assert diff.changed_files[0].module_level_changed is readable

    functions = RevisionFunctions(candidate).of(MODULE)
    assert (functions is not None) is readable
    if functions is not None:
        assert list(functions.functions) == [CHANGED_FUNCTION]
        assert functions.source == case.text(candidate=True)

    units = change_units(base, candidate)
    if readable:
        assert [unit.kind for unit in units] == ["edit"] * len(units)
        assert any(CHANGED_FUNCTION in unit.anchors for unit in units)
        assert all("\ufffd" not in line for unit in units for hunk in unit.hunks for line in hunk.replacement)
    else:
        assert [unit.kind for unit in units] == ["file_replaced"]

    closure = command_files(candidate, ("python", "-m", "pkg.mod"))
    assert ("pkg/helper.py" in closure) is readable

    assert bool(text_mentions(raw, {"amount"})) is readable

    changed = config_change_evidence(diff, base, candidate, frozenset()).values["changed"]
    assert [(entry["key"], entry["before"], entry["after"]) for entry in changed] == (
        [("<module>:SEUIL", 0.5, 0.75)] if readable else []
    )


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_validator_reads_imports_as_the_diagnoser_does(case: EncodingCase) -> None:
    raw = case.raw(candidate=True)
    if case.readable is None:
        with pytest.raises(SyntaxError) as refused:
            imported_modules(raw)
        assert refused.value.msg == _reason(raw)
    else:
        assert "pkg.helper" in imported_modules(raw)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_repairer_and_the_guard_read_utf8_and_refuse_the_rest_with_the_shared_reason(
    tmp_path: Path, case: EncodingCase
) -> None:
    base, candidate = _workspace(tmp_path, case)
    raw = case.raw(candidate=True)
    tree = SourceTree(candidate)
    guarded = read_workspace_text(candidate, MODULE)
    if case.readable == "utf-8":
        assert tree.read(MODULE) == case.text(candidate=True)
        assert guarded == case.text(candidate=True)
        return
    assert tree.read(MODULE) is None
    reason = tree.unreadable_reason(MODULE)
    assert isinstance(guarded, Unreadable)
    if case.readable is None:
        assert _reason(raw) in reason
        assert guarded.reason == _reason(raw)
    else:
        assert case.readable in reason and "UTF-8" in reason
        assert case.readable in guarded.reason
    refusal = revert_file(SourceTree(base), tree, MODULE, [CHANGED_FUNCTION])
    assert isinstance(refusal, StrategyRefusal)
    assert reason in refusal.reason


@pytest.mark.parametrize("case", NON_UTF8_READABLE, ids=lambda case: case.name)
def test_a_change_experiment_rebuilds_a_cookie_file_byte_for_byte_in_its_own_encoding(
    tmp_path: Path, case: EncodingCase
) -> None:
    base, candidate = _workspace(tmp_path, case)
    units = change_units(base, candidate)
    assembled = assemble_tree(base, candidate, units, tmp_path / "assembled")
    assert (assembled / MODULE).read_bytes() == case.raw(candidate=True)
    none = assemble_tree(base, candidate, [], tmp_path / "none")
    assert (none / MODULE).read_bytes() == case.raw(candidate=False)
    assert len(units) > 1  # the constant and the function: each alone is a file Python reads in the same encoding
    for unit in units:
        alone = assemble_tree(base, candidate, [unit], tmp_path / f"unit-{unit.id}")
        decoded = decode_source((alone / MODULE).read_bytes())
        assert decoded.encoding == case.readable
        assert decoded.text.encode(case.readable) == (alone / MODULE).read_bytes()
