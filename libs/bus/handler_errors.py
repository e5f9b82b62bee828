"""What a handler raises to tell the runtime how an input ends other than by its outputs: retried or dead-lettered."""

from __future__ import annotations


class TransientFailure(RuntimeError):
    """A failure of something outside the handler (a database, an API): the input is retried, not dropped.

    The offset is not committed; the partition is rewound to the input and it comes again after a backoff
    (``libs/bus/delivery_policy.py``), until the central policy's ``delivery.max_attempts``: then it is
    dead-lettered with ``retries-exhausted``.
    """

    retry_after_s: float = 1.0
    counted: bool = True
    """False for a wait the handler bounds itself (the ledger waiting for a cause): retried every
    ``retry_after_s``, never counted against ``delivery.max_attempts``."""


class RejectedInput(ValueError):
    """A handler's verdict that a well-formed event cannot be processed; it goes to the dead-letter topic.

    ``keep``: what the dead letter carries instead of the whole input (an oversize input's first bytes; the
    detail then says its size and digest). None: the input itself.
    """

    def __init__(self, reason: str, detail: str = "", keep: bytes | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.keep = keep
