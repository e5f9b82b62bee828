"""What a repair strategy needs to know, read off the evidence: changed functions on the cause's path,
renamed columns, text-numeric columns, unseen categories, columns whose nulls rose, columns the code reads."""

from __future__ import annotations

from collections.abc import Iterable

from contracts.catalogue import CauseLocation, Hypothesis, location_of
from contracts.events.diagnosis import ChangeRef, ColumnRename, GeneratedFileRef, LineSpan, RepairHints, Suspect
from services.diagnoser.evidence import EvidenceKind
from services.diagnoser.experiments.column_faults import ColumnFault
from services.diagnoser.experiments.revert_closure import revert_closure
from services.diagnoser.incident_evidence import IncidentEvidence

MODULE_LEVEL = "<module>"


def repair_hints(collected: IncidentEvidence, hypothesis: Hypothesis | None) -> RepairHints:
    """The static findings of the read columns, joined by the faults the data interventions measured (whatever
    column the code reads them through)."""
    read = _values(collected, EvidenceKind.READ_COLUMNS)
    types = _values(collected, EvidenceKind.SOURCE_TYPES)
    categories = _values(collected, EvidenceKind.SOURCE_CATEGORIES)
    quality = _values(collected, EvidenceKind.SOURCE_QUALITY)
    unseen = categories.get("unseen", {})
    measured = collected.localisation.faults if collected.localisation is not None else ()
    unseen_categories = {
        name: list(unseen[name]["unseen"]) for name in categories.get("columns_over_threshold", []) if name in unseen
    }
    for fault in measured:
        if fault.kind == "category":
            unseen_categories.setdefault(fault.column, list(fault.unseen))
    return RepairHints(
        changed_functions=changed_functions(collected, hypothesis),
        renamed_columns=renamed_columns(collected),
        text_numeric_columns=_joined(types.get("text_numeric_columns", []), measured, "type"),
        unseen_categories=unseen_categories,
        null_columns=_joined(
            quality.get("null_columns", []), [f for f in measured if "null_rate" in f.detail], "quality"
        ),
        read_columns=list(read.get("columns", [])),
        isolated_changes=isolated_changes(collected, hypothesis),
        generated_files=generated_on_path(collected, hypothesis),
    )


def _joined(static: list[str], measured: Iterable[ColumnFault], kind: str) -> list[str]:
    return list(dict.fromkeys([*static, *(fault.column for fault in measured if fault.kind == kind)]))


def isolated_changes(collected: IncidentEvidence, hypothesis: Hypothesis | None) -> list[ChangeRef]:
    """The units of the change that carry the drop, for a cause in the code, with the units that define the
    module-level names a revert of them needs (``revert_closure``)."""
    if collected.isolation is None or location_of(hypothesis) != CauseLocation.CODE:
        return []
    isolation = collected.isolation
    closure = set(revert_closure(isolation.units, isolation.minimal, collected.base_dir, collected.candidate_dir))
    return [
        ChangeRef(
            path=unit.path,
            kind=unit.kind,
            anchors=list(unit.anchors),
            hunks=[
                LineSpan(
                    base_start=hunk.base_start,
                    base_end=hunk.base_end,
                    candidate_start=hunk.candidate_start,
                    candidate_end=hunk.candidate_end,
                )
                for hunk in unit.hunks
            ],
        )
        for unit in isolation.units
        if unit.id in closure
    ]


def generated_on_path(collected: IncidentEvidence, hypothesis: Hypothesis | None) -> list[GeneratedFileRef]:
    """Generated files among those a code repair would edit: the isolated change's, else every changed one."""
    if location_of(hypothesis) != CauseLocation.CODE:
        return []
    paths = collected.isolation.minimal_paths if collected.isolation is not None else tuple(collected.generated)
    return [
        GeneratedFileRef(path=path, reason=item.reason, generator=item.generator)
        for path in paths
        if (item := collected.generated.get(path)) is not None
    ]


def changed_functions(collected: IncidentEvidence, hypothesis: Hypothesis | None) -> list[Suspect]:
    """Functions the candidate changed on the cause's path: feature modules for a feature transformation,
    elsewhere for a training change (a changed module-level parameter counts as ``<module>``), none for a cause
    in the data, all when no cause is named."""
    if location_of(hypothesis) == CauseLocation.DATA:
        return []
    code = _values(collected, EvidenceKind.CODE_CHANGE)
    divisors = {(d["file"], d["function"]): d["divisor"] for d in code.get("unguarded_divisions", [])}
    on_feature_path: dict[Hypothesis | None, bool] = {
        Hypothesis.FEATURE_TRANSFORMATION: True,
        Hypothesis.TRAINING_CONFIG_CHANGE: False,
    }
    wanted = on_feature_path.get(hypothesis)
    isolated = _isolated_anchors(collected)
    suspects = [
        Suspect(file=f["file"], function=f["function"], divisor=divisors.get((f["file"], f["function"])))
        for f in code.get("functions", [])
        if f["status"] != "added"
        and (wanted is None or f["on_feature_path"] == wanted)
        and (isolated is None or (f["file"], f["function"]) in isolated or (f["file"], "*") in isolated)
    ]
    for path in _module_level_paths(collected):
        if Suspect(file=path, function=MODULE_LEVEL) not in suspects:
            suspects.append(Suspect(file=path, function=MODULE_LEVEL))
    if hypothesis == Hypothesis.TRAINING_CONFIG_CHANGE:
        for entry in _values(collected, EvidenceKind.CONFIG_CHANGE).get("changed", []):
            scope = str(entry["key"]).split(":", 1)[0]
            suspect = Suspect(file=entry["file"], function=scope if ":" in str(entry["key"]) else MODULE_LEVEL)
            if not entry["file"].startswith("urn:") and suspect not in suspects:
                suspects.append(suspect)
    return suspects


def _module_level_paths(collected: IncidentEvidence) -> list[str]:
    """Files whose isolated change touches module-level statements (constants, imports) or a config file."""
    if collected.isolation is None:
        return []
    found = []
    for unit in collected.isolation.minimal_units:
        if unit.kind == "edit" and (not unit.path.endswith(".py") or any(a.startswith("<") for a in unit.anchors)):
            found.append(unit.path)
    return list(dict.fromkeys(found))


def _isolated_anchors(collected: IncidentEvidence) -> set[tuple[str, str]] | None:
    """(file, definition) pairs the isolated change touches; (file, "*") for a whole file; None when the change
    was not isolated (every changed function is on the cause's path then)."""
    if collected.isolation is None:
        return None
    anchors: set[tuple[str, str]] = set()
    for unit in collected.isolation.minimal_units:
        if unit.kind != "edit":
            anchors.add((unit.path, "*"))
        for anchor in unit.anchors:
            anchors.add((unit.path, anchor))
            anchors.add((unit.path, anchor.split(".")[0]))
    return anchors


def renamed_columns(collected: IncidentEvidence) -> list[ColumnRename]:
    schema = _values(collected, EvidenceKind.SOURCE_SCHEMA)
    history = _values(collected, EvidenceKind.SCHEMA_HISTORY)
    gone = set(schema.get("read_columns_gone", []))
    new_columns = {name for names in schema.get("new_columns", {}).values() for name in names}
    renames: dict[str, str] = {}
    for item in history.get("renamed", []):
        if item["old"] in gone and item["new"] in new_columns:
            renames[item["old"]] = item["new"]
    for item in schema.get("rename_candidates", []):
        if item["old"] in gone:
            renames.setdefault(item["old"], item["new"])
    measured = collected.localisation.faults if collected.localisation is not None else ()
    for fault in measured:  # the renames the schema intervention tried (by distribution or DataHub's log)
        if fault.kind == "schema" and fault.renamed_to is not None:
            renames.setdefault(fault.column, fault.renamed_to)
    return [ColumnRename(old=old, new=new) for old, new in sorted(renames.items())]


def _values(collected: IncidentEvidence, kind: EvidenceKind) -> dict:
    item = collected.first(kind)
    return item.values if item is not None else {}
