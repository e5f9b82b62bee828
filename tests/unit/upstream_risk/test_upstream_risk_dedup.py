"""The seen-set of reported change fingerprints survives a restart."""

from __future__ import annotations

from pathlib import Path

from services.context.upstream_risk import change_fingerprint
from services.context.upstream_risk_dedup import RiskDeduplicator

FINGERPRINT = change_fingerprint(
    "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)", "schemaMetadata", "schema_change", {}
)


def test_a_remembered_fingerprint_is_seen_after_reopening(tmp_path: Path) -> None:
    dedup = RiskDeduplicator.open(tmp_path)
    assert not dedup.seen(FINGERPRINT)

    dedup.remember(FINGERPRINT, "2025-03-11T08:00:00Z")
    dedup.remember(FINGERPRINT, "2025-03-11T09:00:00Z")
    dedup.close()

    reopened = RiskDeduplicator.open(tmp_path / "upstream-risk-seen.sqlite")
    assert reopened.seen(FINGERPRINT) and len(reopened) == 1


def test_the_fingerprint_depends_on_the_change_not_on_key_order() -> None:
    urn = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)"
    first = change_fingerprint(
        urn, "schemaMetadata", "schema_change", {"fields": [{"kind": "removed", "field_path": "a"}]}
    )
    same = change_fingerprint(
        urn, "schemaMetadata", "schema_change", {"fields": [{"field_path": "a", "kind": "removed"}]}
    )
    other = change_fingerprint(
        urn, "schemaMetadata", "schema_change", {"fields": [{"kind": "removed", "field_path": "b"}]}
    )

    assert first == same != other
    assert len(first) == 64 and int(first, 16) >= 0
