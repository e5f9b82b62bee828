"""YAML documents parsed once per content: the diagnoser, the repairer and the validator each parse the incident's
model policy (``libs/workspace/incident_workspace.py``) for every incident, and PyYAML's safe loader takes ~6 ms on
a 5 kB policy while the typed validation after it takes 0.05 ms. The central policy's readers use it too.

The cache is keyed by the exact text or bytes, so a changed file is parsed again; each caller gets its own deep
copy, so no caller can change what another reads. A document that does not parse is not cached: it raises the
loader's own error every time.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

import yaml

CACHED_DOCUMENTS = 32


def safe_load_once(data: str | bytes) -> Any:
    """``yaml.safe_load(data)``, parsed once per distinct ``data`` (the last ``CACHED_DOCUMENTS`` kept)."""
    return copy.deepcopy(_parsed(data))


@lru_cache(maxsize=CACHED_DOCUMENTS)
def _parsed(data: str | bytes) -> Any:
    return yaml.safe_load(data)
