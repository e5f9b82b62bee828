"""Source categories: values of categorical columns the code reads that the approval window never had,
with the share of rows carrying them and whether each looks like a respelling of a known value."""

from __future__ import annotations

import re

from libs.policy.diagnosis import DiagnosisPolicy
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.profiling.windows import ProfiledPair

METHOD = (
    "categories of low-cardinality text columns in the approval window (train and eval together) against the "
    "values of the incident window; share = rows carrying an unseen value; respelling = equal after case folding "
    "and removing spaces, dashes and underscores"
)


def source_categories_evidence(
    pairs: tuple[ProfiledPair, ...], columns: list[str], thresholds: DiagnosisPolicy
) -> Evidence:
    known = _known_categories(pairs, columns)
    found: dict[str, dict[str, object]] = {}
    for pair in pairs:
        for name, categories in known.items():
            if name not in pair.current.columns:
                continue
            cells = pair.current[name].dropna().astype(str)
            unseen_mask = ~cells.isin(categories)
            share = float(unseen_mask.sum()) / len(pair.current) if len(pair.current) else 0.0
            if not unseen_mask.any() or (name in found and share <= found[name]["row_share"]):  # type: ignore[operator]
                continue
            unseen = sorted(cells[unseen_mask].unique().tolist())
            normalised = {_normalise(value): value for value in categories}
            found[name] = {
                "split": pair.split,
                "unseen": unseen[:50],
                "row_share": round(share, 6),
                "respellings": {
                    value: normalised[_normalise(value)] for value in unseen if _normalise(value) in normalised
                },
                "known": sorted(categories)[:50],
            }
    counted = {name: figures for name, figures in found.items() if figures["row_share"] >= thresholds.unseen_share}  # type: ignore[operator]
    top = max((float(figures["row_share"]) for figures in counted.values()), default=0.0)  # type: ignore[arg-type]
    return make_evidence(
        EvidenceKind.SOURCE_CATEGORIES,
        subject="source_data",
        values={"unseen": found, "columns_over_threshold": sorted(counted)},
        summary=(
            "unseen categories: "
            + "; ".join(
                f"{name}: {', '.join(map(str, figures['unseen'][:4]))} ({figures['row_share']:.1%} of rows)"  # type: ignore[index]
                for name, figures in counted.items()
            )
            if counted
            else "no categorical column the code reads carries values unseen in the approval window"
        ),
        source=EvidenceSource.DATA,
        strength=min(1.0, top / thresholds.unseen_share_full) if counted else 0.0,
        method=METHOD,
    )


def _known_categories(pairs: tuple[ProfiledPair, ...], columns: list[str]) -> dict[str, set[str]]:
    known: dict[str, set[str]] = {}
    for name in columns:
        profiles = [pair.reference_profiles[name] for pair in pairs if name in pair.reference_profiles]
        if profiles and all(profile.type_class == "text" and profile.categories for profile in profiles):
            known[name] = {value for profile in profiles for value in profile.categories}
    return known


def _normalise(value: str) -> str:
    return re.sub(r"[\s_\-]+", "", value.casefold())
