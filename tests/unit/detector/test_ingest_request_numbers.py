"""A CI run's report whose numbers no signed event can carry (NaN, Infinity, 1e999, "inf" as text) is refused
with one line the client reads back (422), not taken in and failed on when the detector signs it (a 500)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from services.detector.ingest_request import BadRequest, parse_evaluation
from tests.support.sample_events import SampleKeys, repaired_incident


def _body() -> dict[str, Any]:
    reported = repaired_incident(SampleKeys.generate(), "ingest-numbers")[0]
    return json.loads(base64.b64decode(reported.envelope.payload))["payload"]


def test_a_report_with_finite_metrics_is_taken() -> None:
    assert parse_evaluation(json.dumps(_body()).encode()).claimed is not None


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
def test_a_metric_json_cannot_carry_is_refused(number: str) -> None:
    text = json.dumps(_body()).replace('"roc_auc": 0.91', f'"roc_auc": {number}', 1)
    assert number in text
    with pytest.raises(BadRequest, match="not JSON"):
        parse_evaluation(text.encode())


@pytest.mark.parametrize("number", ["inf", "nan", "1e999"])
def test_a_metric_written_as_text_that_reads_as_no_finite_number_is_refused(number: str) -> None:
    body = _body()
    body["claimed"]["baseline"]["roc_auc"] = number
    with pytest.raises(BadRequest, match="finite"):
        parse_evaluation(json.dumps(body).encode())
