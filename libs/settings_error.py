"""The one error a bad setting raises, in its own module so the settings' sections (``libs/observability/settings.py``,
``libs/ingest_settings.py``) and ``libs/settings.py``, which gathers them, share it without an import cycle."""

from __future__ import annotations


class SettingsError(ValueError):
    """A setting with a value it cannot have: one line naming the variable, for the process to print and exit 2."""
