"""The Operations page's dead letters: how many per service and reason, and the newest ones, each with the
refused bytes' sha256 and size (never the bytes), the refusing service, its reason and detail, the refused
input's place and the incident its key names when the ledger holds that incident.

Everything here came from a refused record or its headers: hostile text, shown escaped like any other, the
detail's first line in the row and the rest (as kept: cut, control characters replaced) folded under it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

from libs.operations.dead_letter_store import DeadLetterGroup, DeadLetterStore, KeptDeadLetter
from modelguard.console.incident_list import age

FILTERS = ("service", "reason")
NEWEST = 100
MAX_FILTER_CHARS = 128
HEAD_CHARS = 300


@dataclass(frozen=True)
class DeadLetterRow:
    letter: KeptDeadLetter
    incident: str | None
    """The record's key, when it names an incident the ledger holds (a link); None otherwise."""
    detail_head: str
    detail_more: bool
    age: str


@dataclass(frozen=True)
class DeadLetters:
    kept: bool
    """False: this ledger database has no dead-letter table (no ledger service of this version has run on it)."""
    total: int = 0
    groups: tuple[DeadLetterGroup, ...] = ()
    rows: tuple[DeadLetterRow, ...] = ()
    chosen: tuple[tuple[str, str], ...] = ()
    unknown: tuple[str, ...] = ()
    newest: int = NEWEST


def dead_letters(
    store: DeadLetterStore, query: Mapping[str, str], incidents: Collection[str], now: datetime
) -> DeadLetters:
    if not store.exists():
        return DeadLetters(kept=False)
    groups = store.groups()
    chosen = {name: query[name][:MAX_FILTER_CHARS] for name in FILTERS if query.get(name)}
    held = {"service": {g.service for g in groups}, "reason": {g.reason for g in groups}}
    unknown = [f"no dead letter has {name} {value!r}" for name, value in chosen.items() if value not in held[name]]
    letters = store.newest(NEWEST, service=chosen.get("service"), reason=chosen.get("reason"))
    return DeadLetters(
        kept=True,
        total=sum(g.count for g in groups),
        groups=tuple(groups),
        rows=tuple(_row(letter, incidents, now) for letter in letters),
        chosen=tuple(chosen.items()),
        unknown=tuple(unknown),
    )


def _row(letter: KeptDeadLetter, incidents: Collection[str], now: datetime) -> DeadLetterRow:
    lines = [line.strip() for line in letter.detail.splitlines() if line.strip()]
    head = lines[0] if lines else ""
    cut = len(head) > HEAD_CHARS
    return DeadLetterRow(
        letter,
        letter.key if letter.key is not None and letter.key in incidents else None,
        head[: HEAD_CHARS - 1] + "…" if cut else head,
        cut or len(lines) > 1,
        age(letter.dead_lettered_at, now),
    )
