"""Change isolation: the smallest part of the candidate's change that, applied alone to the base tree, carries
the drop on the incident window (delta debugging over files, then hunks), where that part lives (feature code,
training code or configuration, generated code) and which changes carried nothing."""

from __future__ import annotations

from collections.abc import Mapping

from libs.workspace.generated_code import GeneratedFile
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.experiments.change_experiment import ChangeIsolation

METHOD = (
    "delta debugging (ddmin) over the candidate's change, files first, then hunks: each subset applied alone to "
    "the base tree and evaluated on the incident window; a subset carries the drop when it loses at least the "
    "policy's carry_share of what the whole candidate loses; a subset that does not run is unresolved"
)


def change_isolation_unavailable(reason: str) -> Evidence:
    return make_evidence(
        EvidenceKind.CHANGE_ISOLATION,
        subject="workspace",
        values={"available": False, "reason": reason},
        summary=f"change isolation not run: {reason}",
        source=EvidenceSource.EVALUATION,
        strength=0.0,
        method=METHOD,
    )


def change_isolation_evidence(
    isolation: ChangeIsolation, feature_files: frozenset[str], generated: Mapping[str, GeneratedFile]
) -> Evidence:
    minimal = isolation.minimal_units
    carried = isolation.carried or 0.0
    in_features = sum(unit.path in feature_files for unit in minimal) / len(minimal) if minimal else 0.0
    generated_here = sorted({unit.path for unit in minimal if unit.path in generated})
    values = {
        "available": True,
        "units": [unit.as_dict() for unit in isolation.units],
        "minimal": list(isolation.minimal),
        "minimal_paths": list(isolation.minimal_paths),
        "dropped_paths": list(isolation.dropped_paths),
        "carried": isolation.carried,
        "proven": isolation.proven,
        "levels": list(isolation.levels),
        "subsets": [
            {"units": list(s.units), "verdict": s.verdict, "metric": s.metric, "carried": s.carried}
            for s in isolation.subsets
        ],
        "share_in_feature_code": round(in_features, 4),
        "generated_files": [
            {"path": path, "reason": generated[path].reason, "generator": generated[path].generator}
            for path in generated_here
        ],
    }
    described = "; ".join(unit.describe() for unit in minimal[:4]) + (" …" if len(minimal) > 4 else "")
    summary = (
        f"{len(minimal)} of {len(isolation.units)} change unit(s) carry {carried:.0%} of the drop: {described}"
        + (f"; no effect: {', '.join(isolation.dropped_paths)}" if isolation.dropped_paths else "")
        + ("" if isolation.proven else " (the search stopped before it was proven minimal)")
    )
    return make_evidence(
        EvidenceKind.CHANGE_ISOLATION,
        subject="workspace",
        values=values,
        summary=summary,
        source=EvidenceSource.EVALUATION,
        strength=round(min(1.0, max(0.0, carried)), 4),
        method=METHOD,
    )
