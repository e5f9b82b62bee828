"""The `modelguard` command: stack, submit, demo, verify, incidents. Bad input gets one readable line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from libs.settings import SettingsError, load_settings

EXIT_USAGE = 2


class CliError(Exception):
    pass


def _stack(args: argparse.Namespace) -> int:
    import os

    from modelguard.stack import stack_down, stack_status, stack_up

    settings = load_settings()
    if args.action == "up":
        state = stack_up(settings, os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"))
        print(state.to_json())
    elif args.action == "down":
        state = stack_down(settings)
        print("stopped" if state else "no stack was running")
    else:
        status = stack_status(settings)
        if not status:
            print("no stack")
            return 1
        for name, alive in status.items():
            print(f"{name:10} {'running' if alive else 'STOPPED'}")
        return 0 if all(status.values()) else 1
    return 0


def _submit(args: argparse.Namespace) -> int:
    from modelguard.submit import submit, wait_for_run

    settings = load_settings()
    scenario = Path(args.scenario)
    if not (scenario / "scenario.yaml").is_file():
        raise CliError(f"{scenario} is not a scenario folder (no scenario.yaml)")
    run_id = args.run_id or f"local-{int(time.time())}"
    reported = submit(settings, scenario, run_id, args.pull_request)
    print(f"submitted {run_id} as {reported.signed.event.meta.incident_id}")
    if args.wait:
        events = wait_for_run(settings, reported, args.timeout)
        for e in events:
            print(f"  {e.event.meta.event_type:22} {e.event.meta.producer:10} {e.event.meta.occurred_at.isoformat()}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from libs.ledger import LedgerStore, verify_all, verify_checkpoints, verify_incident
    from libs.signing.keys import KeyRegistry

    settings = load_settings()
    registry = KeyRegistry.load(settings.key_registry_path)
    store = LedgerStore(settings.ledger_url)
    if args.incident and not store.incident_events(args.incident):
        raise CliError(f"no incident {args.incident} in the ledger")
    reports = [verify_incident(store, args.incident, registry)] if args.incident else verify_all(store, registry)
    ok = True
    for report in reports:
        ok &= report.ok
        print(f"{report.incident_id}: {report.events_checked} events, {'verified' if report.ok else 'TAMPERED'}")
        for problem in report.problems:
            print(f"  position {problem.position} {problem.event_type} {problem.event_id}: {problem.what}")
    # checkpoints catch what per-incident chains cannot: a lost last event, a lost incident
    checkpoints = verify_checkpoints(store, registry)
    ok &= checkpoints.ok
    print(f"checkpoints: {checkpoints.checkpoints_checked} checked, {'verified' if checkpoints.ok else 'FAILED'}")
    for problem in checkpoints.problems:
        print(f"  {problem}")
    return 0 if ok else 1


def _incidents(args: argparse.Namespace) -> int:
    from libs.ledger import LedgerStore, replay
    from libs.signing.keys import KeyRegistry

    settings = load_settings()
    if args.action == "show" and not args.incident:
        raise CliError("incidents show needs an incident id (see: modelguard incidents list)")
    projections = replay(LedgerStore(settings.ledger_url), KeyRegistry.load(settings.key_registry_path))
    if args.action == "list":
        for incident_id, p in sorted(projections.items()):
            print(f"{incident_id}  {p.status:18} {p.event_count:3} events  {p.model_urn}")
        return 0
    if args.incident not in projections:
        raise CliError(f"no incident {args.incident} in the ledger")
    print(json.dumps(projections[args.incident].model_dump(mode="json"), indent=2))
    return 0


def _emit_mcl(args: argparse.Namespace) -> int:
    from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, emit_change, encode_change, registered_schema_id
    from modelguard.stack import SCENARIOS, read_state

    settings = load_settings()
    spec = Path(args.change)
    if not spec.is_file():
        raise CliError(f"{spec} is not a file")
    files = list(settings.datahub_files) or sorted(SCENARIOS.glob("*/datahub/metadata.json"))
    if args.schema_id is not None:
        schema_id = args.schema_id
    elif settings.schema_registry_url:
        schema_id = registered_schema_id(settings.schema_registry_url)
    else:
        schema_id = OFFLINE_SCHEMA_ID
    data, urn = encode_change(spec, files, schema_id)
    state = read_state(settings.home)
    bootstrap = state.bootstrap if state else settings.kafka_bootstrap
    emit_change(bootstrap, args.topic, data, urn)
    print(f"emitted a {len(data)}-byte MCL for {urn} to {args.topic} (schema id {schema_id})")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from modelguard.demo import run_demo

    return run_demo(Path(args.out))


def _bench(args: argparse.Namespace) -> int:
    from modelguard.bench import run_bench

    return run_bench(args.incidents)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="modelguard", description=__doc__)
    sub = root.add_subparsers(dest="command", required=True)
    stack = sub.add_parser("stack", help="the embedded stack: broker and seven services")
    stack.add_argument("action", choices=["up", "down", "status"])
    stack.set_defaults(run=_stack)
    submit = sub.add_parser("submit", help="evaluate a scenario like the model's CI and report it")
    submit.add_argument("--scenario", default="fixtures/scenarios/churn-monthly-spend")
    submit.add_argument("--run-id")
    submit.add_argument("--pull-request", type=int)
    submit.add_argument("--wait", action="store_true")
    submit.add_argument("--timeout", type=float, default=600.0)
    submit.set_defaults(run=_submit)
    verify = sub.add_parser("verify", help="check every hash, signature and causation link in the ledger")
    verify.add_argument("incident", nargs="?")
    verify.set_defaults(run=_verify)
    incidents = sub.add_parser("incidents", help="incidents rebuilt from the ledger by replay")
    incidents.add_argument("action", choices=["list", "show"])
    incidents.add_argument("incident", nargs="?")
    incidents.set_defaults(run=_incidents)
    emit = sub.add_parser("emit-mcl", help="put an upstream change on DataHub's MCL topic, as DataHub would")
    emit.add_argument("change", help="a change file, e.g. fixtures/scenarios/*/datahub/changes/*.yaml")
    emit.add_argument("--topic", default="MetadataChangeLog_Versioned_v1")
    emit.add_argument("--schema-id", type=int, help="default: from MODELGUARD_SCHEMA_REGISTRY_URL, else any")
    emit.set_defaults(run=_emit_mcl)
    demo = sub.add_parser("demo", help="the churn incident end to end on the embedded stack")
    demo.add_argument("--out", default="out/demo")
    demo.set_defaults(run=_demo)
    bench = sub.add_parser("bench", help="push synthetic incidents through the stack and print figures")
    bench.add_argument("--incidents", type=int, default=20)
    bench.set_defaults(run=_bench)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        return 130
    except (CliError, SettingsError, OSError, ValueError, RuntimeError, LookupError) as exc:
        print(f"modelguard {args.command}: {exc}", file=sys.stderr)
        return 1 if not isinstance(exc, CliError) else EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
