"""The body of `POST /evaluations`: an EvaluationReported payload, checked as untrusted input.

Every refusal is one readable line naming the field (`workspace.base_commit: String should match pattern …`).
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from contracts.common import ArtifactRef
from contracts.events.evaluation import EvaluationReported


class BadRequest(ValueError):
    """A body that cannot become an evaluation; the message is the one line the client gets back."""


def parse_evaluation(raw: bytes) -> EvaluationReported:
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not JSON: {str(exc)[:120]}") from None
    if not isinstance(document, dict):
        raise BadRequest("the body must be a JSON object: an EvaluationReported payload")
    try:
        return EvaluationReported.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BadRequest(f"{where}: {first['msg']}{more}") from None


def referenced_artifacts(evaluation: EvaluationReported) -> dict[str, ArtifactRef]:
    """The artifacts an evaluation names, by field: they must be uploaded before it is accepted."""
    workspace = evaluation.workspace
    return {
        "workspace.base_snapshot": workspace.base_snapshot,
        "workspace.candidate_snapshot": workspace.candidate_snapshot,
        "workspace.data": workspace.data,
    }
