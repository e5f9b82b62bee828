"""Source data extractors on synthetic windows: schema, types, categories, quality, drift, label shift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from libs.canonical_json import canonical_bytes
from libs.policy.diagnosis import DiagnosisPolicy, central_diagnosis_policy
from services.diagnoser.extractors.label_shift import label_shift_evidence
from services.diagnoser.extractors.source_categories import source_categories_evidence
from services.diagnoser.extractors.source_drift import source_drift_evidence
from services.diagnoser.extractors.source_quality import source_quality_evidence
from services.diagnoser.extractors.source_schema import source_schema_evidence
from services.diagnoser.extractors.source_types import source_types_evidence
from services.diagnoser.inputs import DataWindow
from services.diagnoser.profiling.windows import ProfiledPair, profile_windows

ROWS = 600


@pytest.fixture
def thresholds() -> DiagnosisPolicy:
    return central_diagnosis_policy()


def frame(seed: int, rows: int = ROWS) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "tenure": rng.integers(1, 60, rows),
            "spend": rng.gamma(2.0, 50.0, rows).round(2),
            "tier": rng.choice(["bronze", "silver", "gold"], rows),
            "row_id": [f"r{seed}-{i}" for i in range(rows)],
            "target": rng.binomial(1, 0.3, rows),
        }
    )


def windows(tmp_path: Path, approval: pd.DataFrame, incident: pd.DataFrame) -> tuple[DataWindow, DataWindow]:
    found = []
    for name, data in (("approval", approval), ("incident", incident)):
        folder = tmp_path / name
        folder.mkdir()
        data.to_csv(folder / "train.csv", index=False)
        data.to_csv(folder / "eval.csv", index=False)
        found.append(DataWindow(name=name, train=folder / "train.csv", eval=folder / "eval.csv"))  # type: ignore[arg-type]
    return found[0], found[1]


def pairs(tmp_path: Path, incident: pd.DataFrame, thresholds: DiagnosisPolicy) -> tuple[ProfiledPair, ...]:
    approval, current = windows(tmp_path, frame(1), incident)
    return profile_windows(approval, current, thresholds.numeric_parse_rate, thresholds.max_categories)


READ = ["spend", "tenure", "tier"]


def test_unchanged_population_shows_no_fault(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    found = pairs(tmp_path, frame(2), thresholds)
    assert source_schema_evidence(found, READ, thresholds).strength == 0.0
    assert source_types_evidence(found, READ).strength == 0.0
    assert source_categories_evidence(found, READ, thresholds).strength == 0.0
    assert source_quality_evidence(found, READ, thresholds).strength == 0.0
    drift = source_drift_evidence(found, READ, thresholds)
    assert drift.values["drifted"] == [] and drift.strength == 0.0
    assert label_shift_evidence(found, "target", thresholds).strength == 0.0


def test_a_renamed_read_column_and_its_rename_candidate(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    found = pairs(tmp_path, frame(2).rename(columns={"spend": "spend_usd"}), thresholds)
    item = source_schema_evidence(found, READ, thresholds)
    assert item.values["read_columns_gone"] == ["spend"] and item.strength == 1.0
    assert item.values["rename_candidates"][0]["new"] == "spend_usd"
    assert item.values["rename_candidates"][0]["distance"] <= thresholds.rename_max_distance


def test_a_gone_column_with_no_look_alike_has_no_rename(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2).drop(columns=["spend"]).assign(other=np.arange(ROWS) * 1000.0)
    item = source_schema_evidence(pairs(tmp_path, incident, thresholds), READ, thresholds)
    assert item.values["read_columns_gone"] == ["spend"] and item.values["rename_candidates"] == []


def test_numbers_arriving_as_formatted_text(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2)
    incident["spend"] = [f"${value:,.2f}" for value in incident["spend"]]
    item = source_types_evidence(pairs(tmp_path, incident, thresholds), READ)
    assert item.values["text_numeric_columns"] == ["spend"]
    assert item.values["retyped"]["spend"]["unparsed_share"] == 1.0 and item.strength == 1.0


def test_formatted_text_shows_one_example_per_format(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2)
    incident["spend"] = [f"${value + 1000:,.2f}" for value in incident["spend"]]
    incident.loc[:9, "spend"] = "USD 845.00"
    incident.loc[10:14, "spend"] = "1.234,50"
    item = source_types_evidence(pairs(tmp_path, incident, thresholds), READ)
    examples = item.values["retyped"]["spend"]["examples"]
    assert examples[0].startswith("$") and examples[1:] == ["USD 845.00", "1.234,50"]


def test_unseen_categories_and_respellings(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2)
    incident.loc[:59, "tier"] = "Gold "
    incident.loc[60:89, "tier"] = "platinum"
    item = source_categories_evidence(pairs(tmp_path, incident, thresholds), READ, thresholds)
    tier = item.values["unseen"]["tier"]
    assert tier["unseen"] == ["Gold ", "platinum"] and tier["row_share"] == pytest.approx(90 / ROWS)
    assert tier["respellings"] == {"Gold ": "gold"}
    assert item.strength == 1.0


def test_invalid_values_rise_nulls_sentinels_and_impossible_negatives(
    tmp_path: Path, thresholds: DiagnosisPolicy
) -> None:
    incident = frame(2).astype({"spend": float, "tenure": float})
    incident.loc[:119, "spend"] = np.nan
    incident.loc[120:179, "spend"] = -999.0
    incident.loc[:59, "tenure"] = -5
    item = source_quality_evidence(pairs(tmp_path, incident, thresholds), READ, thresholds)
    columns = item.values["columns"]
    assert columns["spend"]["null_rate"][1] == pytest.approx(0.2) and columns["spend"]["sentinels"] == ["-999.0"]
    assert columns["tenure"]["negative_rate"] == [0.0, pytest.approx(0.1)]
    assert item.values["null_columns"] == ["spend"] and item.values["faulty_columns"] == ["spend", "tenure"]
    assert item.strength == 1.0


def test_valid_values_beyond_the_old_range_are_no_quality_fault(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    """A new segment (tenure up to ten times what the approval window had) is drift, not invalid data."""
    incident = frame(2)
    incident.loc[:199, "tenure"] = incident.loc[:199, "tenure"] * 10
    assert source_quality_evidence(pairs(tmp_path, incident, thresholds), READ, thresholds).strength == 0.0


def test_a_small_noisy_rise_is_not_a_fault(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2).astype({"spend": float})
    incident.loc[:3, "spend"] = np.nan  # under 1 %: neither large nor significant
    assert source_quality_evidence(pairs(tmp_path, incident, thresholds), READ, thresholds).strength == 0.0


def test_covariate_drift_by_psi_and_ks_ignores_identifiers(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2)
    incident["spend"] = incident["spend"] * 2.5
    item = source_drift_evidence(pairs(tmp_path, incident, thresholds), [*READ, "row_id"], thresholds)
    assert item.values["drifted"] == ["spend"]
    assert (
        item.values["per_column"]["spend"]["psi"] > thresholds.psi_drift and "row_id" not in item.values["per_column"]
    )
    assert item.strength > 0.5


def test_label_shift_by_total_variation(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    incident = frame(2)
    incident["target"] = np.random.default_rng(3).binomial(1, 0.6, ROWS)
    item = label_shift_evidence(pairs(tmp_path, incident, thresholds), "target", thresholds)
    assert item.values["shifted"] is True and item.values["distance"] > 0.2 and item.strength == 1.0
    assert item.values["per_split"]["eval"]["measure"] == "total_variation"


@pytest.mark.parametrize("cell", ["inf", "-inf", "1e999", "Infinity", "nan", "NaN"])
def test_non_finite_cells_give_evidence_canonical_json_can_write(
    tmp_path: Path, thresholds: DiagnosisPolicy, cell: str
) -> None:
    """A window is the workspace's data: a cell that reads as infinity or NaN must not reach a signed event (sealing
    would fail and the diagnosis be lost). Every extractor's evidence encodes, and the cells are a quality fault."""
    incident = frame(2).astype({"spend": object})
    incident.loc[::7, "spend"] = cell
    found = pairs(tmp_path, incident, thresholds)
    items = [
        source_schema_evidence(found, READ, thresholds),
        source_types_evidence(found, READ),
        source_categories_evidence(found, READ, thresholds),
        source_quality_evidence(found, READ, thresholds),
        source_drift_evidence(found, READ, thresholds),
        label_shift_evidence(found, "target", thresholds),
    ]
    for item in items:
        canonical_bytes(item.model_dump(mode="json"))  # raises ValueError on a non-finite number
    assert items[3].strength > 0.5


def test_a_window_not_in_utf8_is_read_as_it_arrived(tmp_path: Path, thresholds: DiagnosisPolicy) -> None:
    """An extract written in Latin-1 (a model reading it with its own encoding trains fine): the profile reads the
    bytes that are not UTF-8 as replacement characters, so the evidence is made, and shows the text that changed."""
    incident = frame(2)
    incident["tier"] = incident["tier"].replace({"gold": "goldé"})
    approval, current = windows(tmp_path, frame(1), incident)
    current.train.write_bytes(incident.to_csv(index=False).encode("latin-1"))
    found = profile_windows(approval, current, thresholds.numeric_parse_rate, thresholds.max_categories)
    categories = source_categories_evidence(found, READ, thresholds)
    canonical_bytes(categories.model_dump(mode="json"))
    assert "gold\ufffd" in str(categories.values)
