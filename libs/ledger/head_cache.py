"""What a writer remembers of incidents' heads between its appends, so that the common append reads no head.

Trusted only while the ledger's newest position is the one this writer left it at: any other writer's append
(another process, another store on the same database) moves that position, and the writer then forgets everything
and reads the heads again. A writer reads the newest position under the writers' lock, in the transaction it appends
in, so nothing can move it in between. A batch the database refused while the position held (a repeat, or an
incident taken as new that the ledger already held) says nothing of the other incidents: only its own are
forgotten.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from libs.ledger.append_plan import Head

CAPACITY = 65_536
"""Incidents remembered; past this the writer forgets them all and reads heads again as it needs them."""


class HeadCache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._heads: dict[str, Head] = {}
        self._position: int | None = None

    def known(self, newest_position: int, incidents: Iterable[str]) -> dict[str, Head] | None:
        """The heads remembered of these incidents, those it never saw left out; None (and everything forgotten)
        unless the ledger still ends where this writer left it."""
        if newest_position != self._position:
            self._heads.clear()
            return None
        heads = self._heads
        return {i: heads[i] for i in incidents if i in heads}

    def learn(self, heads: Mapping[str, Head], newest_position: int) -> None:
        """After a commit: the heads the transaction read or wrote, and where the ledger now ends."""
        if len(self._heads) + len(heads) > self.capacity:
            self._heads.clear()
        self._heads.update(heads)
        self._position = newest_position

    def forget(self, incidents: Iterable[str] | None = None) -> None:
        """These incidents' heads; with None, every head and where the ledger ends."""
        if incidents is None:
            self._heads.clear()
            self._position = None
            return
        for incident in incidents:
            self._heads.pop(incident, None)
