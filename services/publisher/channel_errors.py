"""How a publication channel fails: try again later, or a refusal that retrying will not change.

Messages are built by the channels from status codes and the remote's own short message, with every secret
redacted; they end up in logs and dead-letter headers.
"""

from __future__ import annotations

from libs.bus.handler_errors import TransientFailure

# The bus sleeps this long before the input comes again; longer would outlast Kafka's poll interval. A limit
# that is still in force then answers again, and the publication waits another round.
MAX_RETRY_AFTER_S = 300.0


class ChannelUnavailable(TransientFailure):
    """The remote could not be reached, answered 5xx, or stayed rate-limited beyond the retry budget.

    Every publication step is idempotent, so the bus re-delivering the input publishes nothing twice.
    """

    def __init__(self, message: str, retry_after_s: float = 5.0) -> None:
        super().__init__(message)
        self.retry_after_s = min(retry_after_s, MAX_RETRY_AFTER_S)


class ChannelRejected(RuntimeError):
    """The remote refused the request (4xx other than rate limits): reported as a failed channel result."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
