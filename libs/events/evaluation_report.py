"""Sign a model CI's evaluation report as the ``reporter``: the first event of an incident run.

Shared by the local CI player (``modelguard submit``/``investigate``) and the detector's HTTP ingestion.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from contracts.events.evaluation import EvaluationReported
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.events.identity import incident_id_for
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION

PRODUCER = "reporter"


def incident_of(evaluation: EvaluationReported, metric: str) -> str:
    """The incident: the model, both commits and the gate metric (a CI retry is the same incident)."""
    w = evaluation.workspace
    return incident_id_for(w.model_urn, w.base_commit, w.candidate_commit, metric)


def sign_report(evaluation: EvaluationReported, metric: str, key: SigningKey) -> SignedEvent:
    """The run id is an input: a CI retry is a new run of the same incident."""
    event = next_event(
        evaluation,
        producer=PRODUCER,
        producer_version=MODELGUARD_VERSION,
        occurred_at=datetime.now(UTC),
        incident_id=incident_of(evaluation, metric),
        extra_input_digests=[hashlib.sha256(evaluation.model_dump_json().encode()).hexdigest()],
    )
    return seal(event, key)
