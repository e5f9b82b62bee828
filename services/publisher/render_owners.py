"""Who to tell, in the comment's words: each affected asset of a withheld repair with the owners DataHub records
for it, and a plain statement for an asset it records none for (never a silent omission)."""

from __future__ import annotations

from contracts.context_snapshot import Owner
from contracts.events.repair import RepairWithheld

HEADING = "### Who to tell (owners recorded in DataHub)"


def owner_lines(payload: RepairWithheld) -> list[str]:
    if not payload.owners:  # an event from before contracts 1.1 names owners without their assets
        named = ", ".join(f"`{urn}`" for urn in payload.owners_to_notify)
        return [HEADING, "", f"Owners to notify: {named}"] if named else []
    lines = [HEADING, ""]
    for entry in payload.owners:
        what = "model" if entry.asset == payload.workspace.model_urn else "upstream dataset"
        if entry.owners:
            lines.append(f"- `{entry.asset}` ({what}): " + ", ".join(_owner(o) for o in entry.owners))
        else:
            lines.append(f"- no owner recorded in DataHub for `{entry.asset}` ({what})")
    return lines


def _owner(owner: Owner) -> str:
    kind = f"{owner.type}, {owner.type_urn}" if owner.type_urn else owner.type
    return f"`{owner.owner_urn}` ({kind})"
