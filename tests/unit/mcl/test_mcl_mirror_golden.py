"""Real DataHub connector output (the shared golden files) bootstraps a mirror that survives a reload."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcp_file import load_mcp_file
from tests.unit.datahub.datahub_test_inputs import GOLDEN_FILES
from tests.unit.mcl.mcl_test_inputs import golden

SAGEMAKER_INPUT = "urn:li:dataset:(urn:li:dataPlatform:s3,training-job/input-dataset.tar_gz,PROD)"


def _endpoint(name: str) -> str:
    arn = f"arn:aws:sagemaker:us-west-2:123412341234:endpoint/{name}"
    return f"urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,{arn},PROD)"


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_a_golden_file_bootstraps_a_mirror_that_reloads_identically(name: str, tmp_path: Path) -> None:
    records = load_mcp_file(golden(name)).records
    mirror = MetadataMirror.open(tmp_path)

    kept = mirror.bootstrap(records, source=name)
    counts = (mirror.entity_count, mirror.edge_count)
    mirror.close()
    reopened = MetadataMirror.open(tmp_path)

    assert kept > 0
    assert (reopened.entity_count, reopened.edge_count) == counts
    assert reopened.load_warnings == []


def test_the_sagemaker_training_input_reaches_both_models_and_their_endpoints() -> None:
    mirror = MetadataMirror.in_memory()
    mirror.bootstrap(load_mcp_file(golden("sagemaker_mces_golden.json")).records, source="sagemaker")

    impacts = mirror.impacted_models(SAGEMAKER_INPUT)

    assert [(impact.model_urn, impact.deployments) for impact in impacts] == [
        (
            "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-first-model,PROD)",
            (_endpoint("the-first-endpoint"),),
        ),
        (
            "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-second-model,PROD)",
            (_endpoint("the-second-endpoint"),),
        ),
    ]
    assert all(len(impact.path) == 3 and impact.path[0] == SAGEMAKER_INPUT for impact in impacts)
