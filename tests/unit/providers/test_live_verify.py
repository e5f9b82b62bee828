"""modelguard.live_verify: skipped without DATAHUB_GMS_URL; against loopback servers otherwise."""

from __future__ import annotations

import io
import socket

from modelguard.live_verify import SKIP_MESSAGE, main
from tests.support.fake_gms import FakeGms, GmsStore
from tests.support.fake_mcp_server import serving_http
from tests.unit.providers.provider_test_support import TOKEN


def _run(env: dict[str, str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main([], env, out)
    return code, out.getvalue()


def test_without_a_gms_url_it_says_it_is_skipped_and_why() -> None:
    code, output = _run({})

    assert code == 0
    assert output.splitlines() == [SKIP_MESSAGE]
    assert "DATAHUB_GMS_URL is not set" in output


def test_it_loads_the_scenario_then_compares_sdk_and_mcp_with_the_file_provider() -> None:
    with FakeGms.serving(GmsStore(), token=TOKEN) as gms, serving_http() as mcp_url:
        code, output = _run({"DATAHUB_GMS_URL": gms.url, "DATAHUB_GMS_TOKEN": TOKEN, "DATAHUB_MCP_URL": mcp_url})
        loaded = sum(len(aspects) for aspects in gms.store.versioned.values())

    assert code == 0, output
    assert loaded > 40
    assert "sdk: 19 entities, same as file" in output
    assert "mcp: 18 entities," in output and "difference(s) from file" in output
    assert (
        "deployments[urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)]: only in file"
        in output
    )
    assert "gap: mcp provider: deployments are unknown" in output
    assert TOKEN not in output


def test_an_unreachable_gms_fails_with_one_line() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"

    code, output = _run({"DATAHUB_GMS_URL": url, "DATAHUB_GMS_TOKEN": TOKEN})

    assert code == 1
    assert len(output.splitlines()) == 1 and output.startswith("live-verify failed: sdk provider")
    assert TOKEN not in output
