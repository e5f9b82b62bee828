"""An incident window whose training CSV the model reads but pandas cannot. The data windows come from outside (an
upload, an upstream extract) and are hostile input: here the incident window's ``train.csv`` was cut inside its
last, quoted cell, as a truncated export is. The model repository (``fixtures/repos/lastmile-eta-ridge``, numpy only)
reads it with the ``csv`` module, which takes the cut cell as it is, and so does the bundle's load check; so the
referee measures the regression and the incident reaches the diagnosis. The diagnoser's own profiling reads the
windows with pandas, which refuses the file (``EOF inside string``): that stopped the diagnosis, and the incident was
dead-lettered by the diagnoser with no diagnosis at all.

Now the data evidence and the data interventions are reported as unavailable with the file and pandas' reason, their
facts count neither for nor against a hypothesis, and the diagnosis decides from the rest. The rest does not name a
cause: the drop follows the data (the code change is documentation only), but every measurement that would say
which fault of the data carries it needed the windows' cells, so the diagnosis abstains rather than name the
bundle's ``covariate_drift`` (or any other data cause) on DataHub's log alone (a retyped upstream field gives
``type_conversion`` 0.33). The incident ends as an abstained diagnosis (``DiagnosisAbstained``, this pipeline's
diagnosis event when no cause is named), a withheld repair and a publication, with no dead letter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from libs.settings import load_settings
from modelguard.investigate import investigate

BUNDLE = Path(__file__).resolve().parents[2] / "fixtures" / "repos" / "lastmile-eta-ridge"
BROKEN = "incident/train.csv"
SOURCE_DATA_KINDS = (
    "data.source_schema",
    "data.source_types",
    "data.source_categories",
    "data.source_quality",
    "data.source_drift",
    "data.label_shift",
)


def _with_truncated_training_file(tmp_path: Path) -> Path:
    """The bundle with its incident training file cut inside a quoted cell of its last row."""
    bundle = tmp_path / BUNDLE.name
    shutil.copytree(BUNDLE, bundle)
    train = bundle / "data" / BROKEN
    lines = train.read_bytes().splitlines(keepends=True)
    *cells, _label = lines[-1].rstrip(b"\n").split(b",")
    train.write_bytes(b"".join(lines[:-1]) + b",".join(cells) + b',"29.')
    return bundle


@pytest.mark.skipif(not BUNDLE.is_dir(), reason=f"the hand-made bundles are not in {BUNDLE.parent}")
def test_a_training_file_pandas_cannot_read_leaves_the_diagnosis_to_the_rest_of_the_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    assert json.loads((BUNDLE / "expected.json").read_text(encoding="utf-8"))["hypothesis"] == "covariate_drift"
    events = investigate(load_settings(), _with_truncated_training_file(tmp_path), "ci-1", 7, lambda _event: None)

    by_type = {e.event.meta.event_type: e.event for e in events}  # investigate raises when anything is dead-lettered
    assert list(by_type) == [
        "EvaluationReported",
        "RegressionDetected",
        "ContextCollected",
        "DiagnosisAbstained",
        "RepairWithheld",
        "Published",
    ]
    diagnosis = by_type["DiagnosisAbstained"].payload
    assert diagnosis.reason.startswith("no hypothesis is supported")
    evidence = {item.kind: item for item in diagnosis.report.evidence}
    counterfactual = evidence["evaluation.counterfactual_attribution"].values
    assert counterfactual["available"] and counterfactual["data_attribution"] >= 0.9  # the model read the file
    for kind in (*SOURCE_DATA_KINDS, "data.interventions"):
        values = evidence[kind].values
        assert values["available"] is False, kind
        assert values["reason"].startswith(f"{BROKEN} cannot be read as a table: "), values["reason"]
        assert "EOF inside string" in values["reason"] and str(tmp_path) not in values["reason"]
    assert "route_distance_km" in evidence["code.read_columns"].values["columns"]  # still found in the code
    assert "## Not computed" in diagnosis.report.markdown and f"{BROKEN} cannot be read" in diagnosis.report.markdown
    # of each data hypothesis only the counterfactual's share (and DataHub's log) could be measured
    shares = {hypothesis.name.value: hypothesis.measured_share for hypothesis in diagnosis.report.hypotheses}
    assert shares["covariate_drift"] == pytest.approx(0.3) and shares["label_shift"] == pytest.approx(0.3)
    assert max(h.score for h in diagnosis.report.hypotheses if h.name.value != "unknown") < 0.5
