"""The context phase as a plain function: a model urn and a provider in, a snapshot out.

No transport and no I/O besides the injected provider; the Kafka entrypoint wraps this later.
"""

from __future__ import annotations

from collections.abc import Sequence

from contracts.context_snapshot import ContextSnapshot, MetadataChange
from contracts.events.context import ContextCollected
from contracts.events.evaluation import RegressionDetected
from libs.datahub.provider import ContextProvider
from services.context.metadata_changes import with_changes

MODEL_URN_PREFIX = "urn:li:mlModel:"


def collect_context(model_urn: str, provider: ContextProvider, fetched_at: str) -> ContextSnapshot:
    if not model_urn.startswith(MODEL_URN_PREFIX):
        raise ValueError(f"not an mlModel urn: {model_urn!r}")
    snapshot = provider.collect(model_urn, fetched_at)
    if snapshot.model_urn != model_urn or snapshot.fetched_at != fetched_at:
        raise ValueError(f"provider {provider.name!r} answered for another model or time")
    return snapshot


def context_for_regression(
    regression: RegressionDetected,
    provider: ContextProvider,
    fetched_at: str,
    changes: Sequence[MetadataChange] = (),
) -> ContextCollected:
    snapshot = with_changes(collect_context(regression.workspace.model_urn, provider, fetched_at), changes)
    return ContextCollected(
        **regression.carried(),
        context=snapshot,
        context_digest=snapshot.digest().removeprefix("sha256:"),
    )
