"""``make live-verify``: check the sdk and mcp providers against a real DataHub.

Skipped (exit 0, one line saying why) unless ``DATAHUB_GMS_URL`` is set. With it:

1. load the churn scenario's metadata into that DataHub with the SDK (``DataHubGraph.emit_mcps``,
   ``EmitMode.SYNC_WAIT`` so search and graph indexes are written before reading);
2. collect the model's context through the sdk provider and, when ``DATAHUB_MCP_URL`` (streamable HTTP)
   or ``DATAHUB_MCP_COMMAND`` (stdio, e.g. ``uvx mcp-server-datahub@0.8.0``) is given, the mcp provider;
3. compare each with the file provider's snapshot of the same metadata and print where they differ,
   then each provider's stated capability gaps.

``DATAHUB_GMS_TOKEN`` is sent to GMS and to the MCP server, and never printed. Exit 0 when the context
was collected (differences are findings, not failures), 1 when DataHub could not be loaded or read.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from datahub.emitter.emit_mode import EmitMode
from datahub.emitter.mcp import MetadataChangeProposalWrapper

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_client import McpServerTarget
from libs.datahub.mcp_file import AspectRecord, MetadataFileError, load_mcp_file
from libs.datahub.mcp_provider import McpContextProvider
from libs.datahub.provider import ContextProvider
from libs.datahub.sdk_errors import ContextUnavailable, describe_error
from libs.datahub.sdk_provider import GmsConnection, SdkContextProvider
from libs.datahub.sdk_snapshot_diff import capability_statements, snapshot_differences

SCENARIO_METADATA = Path(__file__).resolve().parents[1] / "fixtures/scenarios/churn-monthly-spend/datahub/metadata.json"
SKIP_MESSAGE = (
    "live-verify skipped: DATAHUB_GMS_URL is not set (point it at a DataHub GMS, with DATAHUB_GMS_TOKEN where "
    "the server needs one, and optionally DATAHUB_MCP_URL or DATAHUB_MCP_COMMAND for the MCP server)"
)


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None, out: TextIO | None = None) -> int:
    args = _parser().parse_args(argv)
    env = os.environ if env is None else env
    out = out or sys.stdout
    server = env.get("DATAHUB_GMS_URL", "").strip()
    if not server:
        print(SKIP_MESSAGE, file=out)
        return 0
    connection = GmsConnection(server=server, token=env.get("DATAHUB_GMS_TOKEN") or None)
    try:
        records = load_mcp_file(args.metadata).records
        model_urn = args.model or _the_model(records)
        emitted = _load_into_datahub(connection, records)
        print(f"loaded {emitted} aspects of {args.metadata.name} into {server}", file=out)
        fetched_at = datetime.now(UTC).isoformat(timespec="seconds")
        expected = FileContextProvider([args.metadata]).collect(model_urn, fetched_at)
        for provider in _live_providers(connection, env):
            _report(expected, provider.collect(model_urn, fetched_at), out)
    except (ContextUnavailable, MetadataFileError, ValueError) as error:
        print(f"live-verify failed: {error}", file=out)
        return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="live-verify", description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", type=Path, default=SCENARIO_METADATA, help="MCP JSON file to load and compare")
    parser.add_argument("--model", help="model urn (default: the one mlModel in the file)")
    return parser


def _the_model(records: Sequence[AspectRecord]) -> str:
    models = sorted({record.urn for record in records if record.entity_type == "mlModel"})
    if len(models) != 1:
        raise ValueError(f"expected one mlModel in the metadata, found {len(models)}: pass --model")
    return models[0]


def _load_into_datahub(connection: GmsConnection, records: Sequence[AspectRecord]) -> int:
    proposals = [MetadataChangeProposalWrapper(entityUrn=record.urn, aspect=record.aspect) for record in records]
    try:
        with connection.graph() as graph:
            graph.test_connection()
            graph.emit_mcps(proposals, emit_mode=EmitMode.SYNC_WAIT)
    except Exception as error:
        raise ContextUnavailable(
            "sdk", connection.server, f"loading the metadata failed: {describe_error(error)}"
        ) from None
    return len(proposals)


def _live_providers(connection: GmsConnection, env: Mapping[str, str]) -> list[ContextProvider]:
    providers: list[ContextProvider] = [SdkContextProvider(connection)]
    token = env.get("DATAHUB_GMS_TOKEN") or None
    if env.get("DATAHUB_MCP_URL"):
        providers.append(McpContextProvider(McpServerTarget(url=env["DATAHUB_MCP_URL"], token=token)))
    elif env.get("DATAHUB_MCP_COMMAND"):
        server_env = {"DATAHUB_GMS_URL": connection.server}
        command = tuple(shlex.split(env["DATAHUB_MCP_COMMAND"]))
        providers.append(McpContextProvider(McpServerTarget(command=command, env=server_env, token=token)))
    return providers


def _report(expected: ContextSnapshot, actual: ContextSnapshot, out: TextIO) -> None:
    differences = snapshot_differences(expected, actual)
    verdict = "same as file" if not differences else f"{len(differences)} difference(s) from file"
    print(f"{actual.provider}: {len(actual.entities)} entities, {verdict}", file=out)
    for difference in differences:
        print(f"  {difference.describe('file', actual.provider)}", file=out)
    for statement in capability_statements(actual):
        print(f"  gap: {statement}", file=out)


if __name__ == "__main__":
    raise SystemExit(main())
