"""On the public bundles whose truth is a cause in the data, the owners a withheld outcome tells are the ones
the bundle's own DataHub files record (read here straight from the JSON): the context service's collection from
the bundle's ``datahub/`` folder, the diagnosis's context summary, the repairer's choice. No diagnosis runs: with
no faulty column named, a data cause lies in the lineage's source datasets (the training dataset itself in the
generated suite, its upstream tables in most hand-made bundles, whose catalogues have gaps: some sources have no
ownership aspect at all)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from contracts.catalogue import CauseLocation, location_of
from libs.datahub.change_records import read_change_records
from libs.datahub.file_provider import FileContextProvider
from services.context.handler import collect_context
from services.context.metadata_changes import with_changes
from services.diagnoser.report import context_summary
from services.repairer.outcome_owners import owners_to_tell

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
FETCHED = "2025-06-30T00:00:00.000+00:00"


def data_cause_bundles() -> list[Path]:
    bundles = sorted((FIXTURES / "scenarios").glob("*/expected.json")) + sorted(
        (FIXTURES / "repos").glob("*/expected.json")
    )
    return [
        path.parent for path in bundles if location_of(json.loads(path.read_text())["hypothesis"]) == CauseLocation.DATA
    ]


def aspect_json(record: dict[str, Any]) -> dict[str, Any]:
    """An MCP's ``aspect.json``, an MCL's ``aspect.value`` string, or a plain aspect object."""
    aspect = record.get("aspect") or {}
    if isinstance(aspect.get("json"), dict):
        return aspect["json"]
    return json.loads(aspect["value"]) if isinstance(aspect.get("value"), str) else aspect


def owners_in_files(bundle: Path, urn: str) -> set[str]:
    """The owners the bundle's DataHub files record for ``urn``: the last ownership aspect written for it."""
    owners: set[str] = set()
    for name in ("metadata.json", "changes.json"):
        path = bundle / "datahub" / name
        for record in json.loads(path.read_text()) if path.is_file() else []:
            if record.get("entityUrn") == urn and record.get("aspectName") == "ownership":
                owners = {entry["owner"] for entry in aspect_json(record).get("owners", [])}
    return owners


def told_by(bundle: Path) -> dict[str, set[str]]:
    spec = yaml.safe_load((bundle / "bundle.yaml").read_text())
    metadata, changes = bundle / "datahub" / "metadata.json", bundle / "datahub" / "changes.json"
    provider = FileContextProvider([metadata] if metadata.is_file() else [])
    snapshot = collect_context(spec["model"]["urn"], provider, FETCHED)
    snapshot = with_changes(snapshot, read_change_records(changes) if changes.is_file() else [])
    hypothesis = json.loads((bundle / "expected.json").read_text())["hypothesis"]
    told = owners_to_tell(context_summary(snapshot), [hypothesis])
    return {entry.asset: {owner.owner_urn for owner in entry.owners} for entry in told}


@pytest.mark.parametrize("bundle", data_cause_bundles(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_data_causes_owners_are_those_its_datahub_files_record(bundle: Path) -> None:
    model = yaml.safe_load((bundle / "bundle.yaml").read_text())["model"]["urn"]
    told = told_by(bundle)
    assert list(told)[-1] == model, "the model's owners come last"
    for asset, owners in told.items():
        assert owners == owners_in_files(bundle, asset), asset
    assert any(told.values()), "someone is told"


def test_the_generated_suite_names_a_team_that_owns_the_data() -> None:
    told = told_by(FIXTURES / "scenarios" / "house-prices-new-district")
    dataset = "urn:li:dataset:(urn:li:dataPlatform:snowflake,property.sales.closed_transactions,PROD)"
    assert told[dataset] == {"urn:li:corpuser:nadia.rahman", "urn:li:corpGroup:listings-data"}
