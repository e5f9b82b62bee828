"""Which store the metadata mirror persists in: PostgreSQL when a state URL is configured, else SQLite."""

from __future__ import annotations

from pathlib import Path

from libs.datahub.mcl.mirror_store import MIRROR_FILE_NAME, MirrorStore
from libs.datahub.mcl.mirror_store_postgres import PostgresMirrorStore
from libs.datahub.mcl.mirror_store_sqlite import SqliteMirrorStore


def open_mirror_store(state_url: str | None, folder: Path) -> MirrorStore:
    """PostgreSQL at ``state_url`` (``MODELGUARD_STATE_URL``, shared by replicas), else ``folder/mirror.sqlite``."""
    if state_url:
        return PostgresMirrorStore(state_url)
    return SqliteMirrorStore.open(folder / MIRROR_FILE_NAME)
