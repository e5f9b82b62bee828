"""Differences between two values of a data job's dataJobInfo or dataJobInputOutput (pure).

Inputs and outputs are read through the same ``Relationship`` annotations the mirror indexes
(:func:`libs.datahub.mcl.aspect_facts.lineage_pairs`), so ``inputDatasets`` and ``inputDatasetEdges``
(and the output/job variants) count alike. Column-level lineage pairs are compared as sets. For
dataJobInfo every top-level field but the audit stamps (``created``, ``modified``) is compared.
"""

from __future__ import annotations

from typing import Any

from datahub.emitter.serialization_helper import pre_json_transform
from datahub.metadata.schema_classes import _Aspect

from libs.datahub.mcl.aspect_facts import column_pairs, lineage_pairs

IO_ASPECT = "dataJobInputOutput"
INFO_ASPECT = "dataJobInfo"
_INFO_AUDIT_FIELDS = frozenset({"created", "modified", "lastModified"})


def input_output_change(job_urn: str, previous: _Aspect, current: _Aspect) -> dict[str, list[str]] | None:
    """Added/removed inputs, outputs and column pairs; None when the job reads and writes the same things."""
    before, after = _flows(job_urn, previous), _flows(job_urn, current)
    change: dict[str, list[str]] = {}
    for name in ("inputs", "outputs", "column_lineage"):
        added, removed = sorted(after[name] - before[name]), sorted(before[name] - after[name])
        if added:
            change[f"{name}_added"] = added
        if removed:
            change[f"{name}_removed"] = removed
    return change or None


def info_change(previous: _Aspect, current: _Aspect) -> dict[str, dict[str, Any]] | None:
    """Changed dataJobInfo fields as {field: {"before", "after"}}; None when only audit stamps moved."""
    before, after = pre_json_transform(previous.to_obj()), pre_json_transform(current.to_obj())
    changed = {
        key: {"before": before.get(key), "after": after.get(key)}
        for key in sorted(set(before) | set(after))
        if key not in _INFO_AUDIT_FIELDS and before.get(key) != after.get(key)
    }
    return changed or None


def _flows(job_urn: str, aspect: _Aspect) -> dict[str, set[str]]:
    pairs = lineage_pairs(job_urn, IO_ASPECT, aspect)
    return {
        "inputs": {upstream for upstream, downstream in pairs if downstream == job_urn},
        "outputs": {downstream for upstream, downstream in pairs if upstream == job_urn},
        "column_lineage": {
            f"{source[0]}#{source[1]} -> {target[0]}#{target[1]}"
            for source, target in column_pairs(job_urn, IO_ASPECT, aspect)
        },
    }
