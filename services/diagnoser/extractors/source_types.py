"""Source types: numeric columns the code reads that arrive as text in the incident window, formatted
numbers ("$1,234.50", "12 %") or not numbers at all, with the share of cells that no longer parse."""

from __future__ import annotations

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.profiling.windows import ProfiledPair

MAX_EXAMPLES = 8
"""Formats shown per column; rarer ones are left out."""
METHOD = (
    "type class per column (numeric when the policy's numeric_parse_rate of present cells parse as written, "
    "numeric text when they parse once currency signs, separators and units are stripped) compared between windows"
)


def source_types_evidence(pairs: tuple[ProfiledPair, ...], columns: list[str]) -> Evidence:
    found: dict[str, dict[str, object]] = {}
    for pair in pairs:
        for name in columns:
            if name not in pair.reference_profiles or name not in pair.current_profiles:
                continue
            before, after = pair.reference_profiles[name], pair.current_profiles[name]
            if before.type_class != "numeric" or after.type_class == "numeric":
                continue
            unparsed = round(1.0 - after.numeric_parse_rate, 6)
            if name not in found or unparsed > found[name]["unparsed_share"]:  # type: ignore[operator]
                found[name] = {
                    "split": pair.split,
                    "now": after.type_class,
                    "unparsed_share": unparsed,
                    "formatted_parse_rate": after.formatted_parse_rate,
                    "examples": _examples(pair, name),
                }
    text_numeric = sorted(name for name, figures in found.items() if figures["now"] == "numeric_text")
    strength = max((float(figures["unparsed_share"]) for figures in found.values()), default=0.0)  # type: ignore[arg-type]
    return make_evidence(
        EvidenceKind.SOURCE_TYPES,
        subject="source_data",
        values={"retyped": found, "text_numeric_columns": text_numeric},
        summary=(
            "numeric column(s) arrive as text: "
            + ", ".join(
                f"{name} ({figures['unparsed_share']:.0%} of cells unparsable)" for name, figures in found.items()
            )
            if found
            else "every numeric column the code reads still arrives as numbers"
        ),
        source=EvidenceSource.DATA,
        strength=min(1.0, strength),
        method=METHOD,
    )


def _examples(pair: ProfiledPair, name: str) -> list[str]:
    """One unparsable cell per format (its digits aside: "$1,019.54" and "$2,500.00" share one), the most
    frequent formats first, so that a reader (or a repair choosing how to parse) sees every way it is written."""
    cells = pair.current[name].dropna().astype(str)
    unparsable = cells[~cells.str.strip().str.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")]
    formats = unparsable.str.replace(r"\d+", "9", regex=True)
    ranked = sorted(formats.value_counts().items(), key=lambda item: (-item[1], item[0]))
    return [str(unparsable[formats == shape].min()) for shape, _ in ranked[:MAX_EXAMPLES]]
