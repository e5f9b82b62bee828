"""ModelGuard's own version, stamped on every event it produces."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    MODELGUARD_VERSION = version("modelguard")
except PackageNotFoundError:  # running from a source tree without an install
    MODELGUARD_VERSION = "0.0.0+source"
