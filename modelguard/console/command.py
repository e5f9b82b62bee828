"""``modelguard console``: serve the read-only incident console over this home's ledger (docs/console.md)."""

from __future__ import annotations

import argparse
import os
import socket
from typing import Any

from modelguard.console.config import ConsoleConfig, ConsoleConfigError, console_config


def add_console_parser(sub: Any) -> None:
    """Register ``console`` on the ``modelguard`` subparsers."""
    console = sub.add_parser(
        "console",
        help="the read-only web incident console over the ledger (docs/console.md)",
        description="Serve the read-only incident console over this home's ledger: the incidents, and each one's "
        "signed timeline with its verification, gate, counterfactual runs, hypotheses, lineage, patch, checks, "
        "publications and attestation; and Operations: the dead letters, the incidents that have not moved, the MCL "
        "intake's counts. Readers need the bearer token (MODELGUARD_CONSOLE_TOKEN or --token-file) or "
        "the trusted header of an OIDC proxy; without either it refuses to start unless --insecure-local, which "
        "binds a loopback address only.",
    )
    console.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    console.add_argument("--port", type=int, default=8080, help="port to listen on (0: any free one, printed)")
    console.add_argument("--token-file", metavar="FILE", help="a file holding the bearer token readers must present")
    console.add_argument(
        "--trusted-header",
        metavar="NAME",
        help="the header an OIDC proxy in front of the console sets to the user it authenticated",
    )
    console.add_argument(
        "--context-metrics",
        metavar="URL",
        help="the context service's /metrics, for the MCL intake's counts on the Operations page (default: the "
        "embedded stack's, when one runs from this home)",
    )
    console.add_argument(
        "--insecure-local", action="store_true", help="no auth, on a loopback address only (a look on your machine)"
    )
    console.set_defaults(run=run_console)


def run_console(args: argparse.Namespace) -> int:
    import uvicorn

    from libs.artifacts.open_store import artifact_store
    from libs.settings import load_settings
    from modelguard.cli import CliError, _audit_ledger, _registry
    from modelguard.console.app import console_app
    from modelguard.console.intake_source import ConfiguredMetrics, IntakeCountsSource, StackMetrics
    from modelguard.console.ledger_source import ConsoleLedger

    try:
        config = console_config(
            os.environ,
            host=args.host,
            port=args.port,
            token_file=args.token_file,
            trusted_header=args.trusted_header,
            insecure_local=args.insecure_local,
            context_metrics=args.context_metrics,
        )
    except ConsoleConfigError as exc:
        raise CliError(str(exc)) from exc
    settings = load_settings()
    ledger = ConsoleLedger(_audit_ledger(settings), _registry(settings), artifact_store(settings))
    intake: IntakeCountsSource = (
        ConfiguredMetrics(config.context_metrics) if config.context_metrics else StackMetrics(settings.home)
    )
    listener = _listen(config)
    host, port = listener.getsockname()[:2]
    auth = "none (loopback only)" if not config.auth.configured else _auth_line(config)
    print(f"console for {settings.home} on http://{host}:{port}/ (auth: {auth}); Ctrl-C stops it", flush=True)
    server = uvicorn.Server(uvicorn.Config(console_app(ledger, config.auth, intake), log_level="info"))
    server.run(sockets=[listener])
    return 0


def _listen(config: ConsoleConfig) -> socket.socket:
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((config.host, config.port))
    listener.listen(128)
    return listener


def _auth_line(config: ConsoleConfig) -> str:
    ways = ["bearer token"] if config.auth.token else []
    if config.auth.trusted_header:
        ways.append(f"trusted header {config.auth.trusted_header}")
    return " or ".join(ways)
