"""The facts the mirror stores beside each indexed aspect read back as they were written, in the text written today
and in the text earlier versions wrote (Python's json, non-ASCII escaped)."""

from __future__ import annotations

import json

from libs.datahub.mcl.aspect_facts import AspectFacts, facts_from_json, facts_to_json

UPSTREAM = "urn:li:dataset:(urn:li:dataPlatform:hive,kunden.bestellungen_ä,PROD)"
DOWNSTREAM = "urn:li:dataset:(urn:li:dataPlatform:hive,顧客.注文,PROD)"


def _facts() -> list[AspectFacts]:
    return [
        AspectFacts(),
        AspectFacts(lineage=((UPSTREAM, DOWNSTREAM),), removed=True),
        AspectFacts(column_lineage=(((UPSTREAM, "menge"), (DOWNSTREAM, "")),), owners=()),
        AspectFacts(
            deployments=('urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,ü\\"x,PROD)',), owners=("a",)
        ),
    ]


def test_facts_read_back_as_they_were_written() -> None:
    for facts in _facts():
        assert facts_from_json(facts_to_json(facts)) == facts


def test_facts_an_earlier_version_wrote_read_back_the_same() -> None:
    for facts in _facts():
        written_before = json.dumps(json.loads(facts_to_json(facts)), separators=(",", ":"))
        assert "\\u" in written_before or written_before.isascii()
        assert facts_from_json(written_before) == facts
