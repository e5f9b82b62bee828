"""A service process's logging: one handler on stderr with ModelGuard's format (``log_format``), and FastStream's
loggers, which otherwise write colour codes to stdout, sent through it."""

from __future__ import annotations

import logging
import sys

from libs.observability.log_format import formatter_for
from libs.observability.settings import LoggingSettings

FASTSTREAM_LOGGER = "modelguard.faststream"
"""The logger FastStream's broker and app are given (``make_broker``), so their lines look like ours."""
_LIBRARY_LOGGERS = ("faststream", "faststream.access", "faststream.access.kafka")


def configure_logging(service: str, settings: LoggingSettings) -> None:
    """Replace the root logger's handlers with one that writes ``service``'s lines to stderr, at the level and in
    the format ``settings`` say."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter_for(service, sys.stderr, settings.format))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(settings.level)
    for name in _LIBRARY_LOGGERS:  # FastStream's own handlers colour their output; ours do not
        library = logging.getLogger(name)
        for existing in list(library.handlers):
            library.removeHandler(existing)
        library.propagate = True
