"""Write an investigated incident to a folder: each phase's event, the diagnosis report, the patch, and
``summary.json`` (docs/scenarios.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from libs.events.codec import SignedEvent


def write_investigation(out: Path, summary: dict[str, Any], events: list[SignedEvent]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    events_dir = out / "events"
    shutil.rmtree(events_dir, ignore_errors=True)
    events_dir.mkdir()
    for number, signed in enumerate(events, start=1):
        name = f"{number:02d}-{signed.event.meta.event_type}.json"
        document = {"signer": signed.signer, "event": signed.event.model_dump(mode="json")}
        (events_dir / name).write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for stale in ("diagnosis.md", "repair.patch"):
        (out / stale).unlink(missing_ok=True)
    report = _last_report(events)
    if report is not None and report.markdown:
        (out / "diagnosis.md").write_text(report.markdown, encoding="utf-8")
    proposed = [e.event.payload for e in events if e.event.meta.event_type == "RepairProposed"]
    if proposed:
        (out / "repair.patch").write_text(proposed[-1].patch.diff, encoding="utf-8")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _last_report(events: list[SignedEvent]) -> Any:
    for signed in reversed(events):
        if signed.event.meta.event_type in ("DiagnosisCompleted", "DiagnosisAbstained"):
            return signed.event.payload.report
    return None
