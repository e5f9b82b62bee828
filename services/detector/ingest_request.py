"""The body of `POST /evaluations`: an EvaluationReported payload, checked as untrusted input.

Every refusal is one readable line naming the field (`workspace.base_commit: String should match pattern …`).
A body in the shape of EvaluationReported 1.x (`baseline_metrics` and `candidate_metrics`, what CI actions
released before 2.0 send) is read as 1.x and upcast, as a stored 1.x event is (``contracts/upcasting.py``).
"""

from __future__ import annotations

from pydantic import ValidationError

from contracts.common import ArtifactRef
from contracts.events.evaluation import EvaluationReported
from contracts.history.evaluation_reported_v1 import EvaluationReported as EvaluationReportedV1
from contracts.registry import contract_for
from contracts.upcasting import UpcastRefused, upcast_payload
from libs.canonical_json import canonical_bytes, strict_loads

V1_FIELDS = frozenset({"baseline_metrics", "candidate_metrics"})


class BadRequest(ValueError):
    """A body that cannot become an evaluation; the message is the one line the client gets back."""


def parse_evaluation(raw: bytes) -> EvaluationReported:
    try:
        document = strict_loads(raw)  # no NaN, Infinity or 1e999: no signed event could carry them
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not JSON: {str(exc)[:120]}") from None
    if not isinstance(document, dict):
        raise BadRequest("the body must be a JSON object: an EvaluationReported payload")
    try:
        if V1_FIELDS & document.keys() and "claimed" not in document:
            evaluation = _upcast_v1(EvaluationReportedV1.model_validate(document))
        else:
            evaluation = EvaluationReported.model_validate(document)
        _finite(evaluation)
        return evaluation
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BadRequest(f"{where}: {first['msg']}{more}") from None
    except UpcastRefused as exc:
        raise BadRequest(str(exc)) from None


def _finite(evaluation: EvaluationReported) -> None:
    """A number given as text ("inf", "nan") reads as a float no canonical JSON holds: refused here, with a reason,
    rather than when the detector signs the event."""
    try:
        canonical_bytes(evaluation.model_dump(mode="json"))
    except ValueError:
        raise BadRequest("a number in the body is not finite (NaN, Infinity or too large for a float)") from None


def _upcast_v1(report: EvaluationReportedV1) -> EvaluationReported:
    today = contract_for("EvaluationReported").major
    return EvaluationReported.model_validate(
        upcast_payload("EvaluationReported", 1, today, report.model_dump(mode="json"))
    )


def referenced_artifacts(evaluation: EvaluationReported) -> dict[str, ArtifactRef]:
    """The artifacts an evaluation names, by field: they must be uploaded before it is accepted."""
    workspace = evaluation.workspace
    return {
        "workspace.base_snapshot": workspace.base_snapshot,
        "workspace.candidate_snapshot": workspace.candidate_snapshot,
        "workspace.data": workspace.data,
    }
