"""Paths inside temporary folders, taken out of a trial's failure text so that reports are stable."""

from __future__ import annotations

import re

SCRATCH_PATH = re.compile(r"(?:/[\w.-]+)*/(?:modelguard[\w-]*[-_]\w{6,}|tmp\w{8}|tmp[\w-]*[-_]\w{6,})(?:/[\w.-]+)*")
"""A path inside a temporary folder (``/tmp/modelguard-run-abc123/...``): replaced, so reports are stable."""


def without_scratch_paths(text: str) -> str:
    return SCRATCH_PATH.sub("<scratch>", text)
