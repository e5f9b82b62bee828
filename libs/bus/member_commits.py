"""Committing a message's position only as the group member that read it.

FastStream acknowledges a message by ``consumer.commit()``: every position the consumer holds, committed under the
group membership the consumer has *when the handler returns*. A handler can run for seconds (a diagnosis runs
commands), and the membership can change meanwhile. When the broker is replaced by an empty one at the same address
(an in-memory broker restarted, a cluster rebuilt), the consumer reconnects, finds its partitions' metadata changed
or its member unknown, and joins the new broker's group. A commit made on the way writes the dead broker's positions
into the new broker's group, past records the group never read, and the consumer that starts next skips them:

- after the new broker refused the member (unknown member), aiokafka forgets its generation (-1) and a commit goes
  out as a *standalone* commit, which a broker accepts;
- while the member joins again, the commit carries its member id and generation, which the new broker may know by
  then (the embedded broker's first generation is 0, as the dead broker's was);
- after the join, the commit is under a new assignment, whose positions were not this message's.

A rebalance of a live group has the same shape: the partition may be someone else's by the time the handler returns.

So the acknowledgement of a message commits only while the consumer is still the member that read it: the same
assignment (aiokafka makes a new one at every join), not joining again, under the same real generation. Otherwise
nothing is committed and the message is read again by whoever holds its partition; every service remembers the
inputs it handled (``processed_inputs``) and sends their outputs again instead of redoing them. A commit the new
broker refuses outright (a member it never heard of) raises, as before.

Positions are read from aiokafka's private state (``_subscription``, ``_coordinator``), as ``consumer_stop`` does;
``tests/integration/test_member_commits.py`` fails if a new aiokafka changes them. A consumer that has no group
membership to compare (the in-memory broker's) commits as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("modelguard.bus")

NO_GENERATION = -1
"""aiokafka's generation after the broker refused the member, until it joins again (Kafka's default generation)."""


@dataclass(frozen=True)
class Membership:
    assignment: object
    generation: int
    rejoining: bool

    def same_as(self, other: Membership) -> bool:
        return self.assignment is other.assignment and self.generation == other.generation


def membership(consumer: Any) -> Membership | None:
    """The consumer's group membership now: its assignment object and generation; None for a consumer without
    aiokafka's group state."""
    subscription_state = getattr(consumer, "_subscription", None)
    coordinator = getattr(consumer, "_coordinator", None)
    if subscription_state is None or coordinator is None or not hasattr(coordinator, "generation"):
        return None
    subscription = subscription_state.subscription
    assignment = subscription.assignment if subscription is not None else None
    return Membership(assignment, coordinator.generation, bool(subscription_state.reassignment_in_progress))


class MemberCommits:
    """Stands for a consumer in one message's acknowledgement: ``commit`` commits only as the member that read it;
    everything else (``seek``, ``assignment`` …) is the consumer's."""

    def __init__(self, consumer: Any, what: str) -> None:
        self._consumer = consumer
        self._what = what
        self.read_as = membership(consumer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)

    def refusal(self) -> str | None:
        """Why a commit now would not be this member's; None when it would."""
        if self.read_as is None:
            return None
        now = membership(self._consumer)
        if now is None or self.read_as.assignment is None:
            return "the consumer has no assignment"
        if self.read_as.generation == NO_GENERATION or now.generation == NO_GENERATION:
            return "the broker does not know this member (a new broker?)"
        if self.read_as.rejoining or now.rejoining:
            return "the member is joining its group again (a new broker, or a rebalance)"
        if not now.same_as(self.read_as):
            return f"the group changed (generation {self.read_as.generation} → {now.generation}, a new assignment)"
        return None

    async def commit(self) -> None:
        refused = self.refusal()
        if refused is not None:
            log.info("not committing the position after %s: %s; it will be read again", self._what, refused)
            return
        await self._consumer.commit()


def commit_as_reader(message: Any, what: str) -> None:
    """From now on, ``message``'s acknowledgement commits only as the member that read it."""
    consumer = getattr(message, "consumer", None)
    if consumer is not None and not isinstance(consumer, MemberCommits):
        message.consumer = MemberCommits(consumer, what)
