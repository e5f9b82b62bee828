"""The `modelguard` command: stack, submit, demo, verify, incidents. Bad input gets one readable line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiokafka.errors import KafkaError

from libs.bundle.load import BundleError, is_bundle
from libs.policy.errors import PolicyError
from libs.settings import Settings, SettingsError, load_settings
from libs.version import MODELGUARD_VERSION
from modelguard.exit_codes import FAILURE, INTERRUPTED, OK, USAGE, exit_code_lines

if TYPE_CHECKING:
    from libs.bundle.load import Bundle
    from libs.events.codec import SignedEvent
    from libs.ledger import LedgerStore

EXIT_FAILURE = FAILURE
"""Something outside the input failed: the broker, the database, a file that cannot be read."""
EXIT_USAGE = USAGE
"""Bad input: a flag, a bundle, a YAML or CSV file, a home where nothing has run."""


class CliError(Exception):
    pass


BAD_INPUT = (CliError, BundleError, PolicyError)


def _stack(args: argparse.Namespace) -> int:
    import os

    from modelguard.health_ports import metrics_url
    from modelguard.replicas import ReplicaCountError, parse_replicas, replica_counts
    from modelguard.stack import SERVICES, stack_down, stack_status, stack_up

    settings = load_settings()
    if args.action == "up":
        try:
            replicas = parse_replicas(args.replicas)
            replica_counts(os.environ, SERVICES, replicas, settings.kafka_partitions, settings.state_url is not None)
        except ReplicaCountError as exc:
            raise CliError(str(exc)) from None
        state = stack_up(settings, os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"), replicas=replicas)
        print(state.to_json())
    elif args.action == "down":
        stopped = stack_down(settings)
        print("stopped" if stopped else "no stack was running")
    else:
        status = stack_status(settings)
        if not status:
            print("no stack")
            return FAILURE
        for name, service in status.items():
            line = f"{name:10} {'running' if service.running else 'STOPPED':8} pid {service.pid or '-'}"
            if name not in ("supervisor", "broker"):
                exited = f", last exit {service.last_exit}" if service.last_exit is not None else ""
                line += f"  restarts {service.restarts}{exited}"
            if service.health_port is not None:
                line += f"  metrics {metrics_url(service.health_port)}"
            print(line)
        return OK if all(service.running for service in status.values()) else FAILURE
    return OK


def _submit(args: argparse.Namespace) -> int:
    from modelguard.submit import submit, wait_for_run

    settings = load_settings()
    scenario = Path(args.bundle)
    if not is_bundle(scenario):
        raise CliError(f"{scenario} is not a bundle folder (no bundle.yaml; see docs/scenarios.md)")
    run_id = args.run_id or f"local-{int(time.time())}"
    reported = submit(settings, scenario, run_id, args.pull_request)
    print(f"submitted {run_id} as {reported.signed.event.meta.incident_id}")
    if args.wait:
        events = wait_for_run(settings, reported, args.timeout)
        for e in events:
            print(f"  {e.event.meta.event_type:22} {e.event.meta.producer:10} {e.event.meta.occurred_at.isoformat()}")
    return OK


def _verify(args: argparse.Namespace) -> int:
    from libs.ledger.audit import audit_ledger
    from libs.ledger.external_head import HeadFile, HeadLog, HeadSource

    settings = load_settings()
    registry = _registry(settings)
    store = _audit_ledger(settings)
    if args.incident and not store.incident_events(args.incident):
        raise CliError(f"no incident {args.incident} in the ledger")
    heads: list[HeadSource] = [] if args.without_external_head else [HeadFile(settings.ledger_head_path)]
    if settings.ledger_head_log is not None:
        heads.append(HeadLog(settings.ledger_head_log))
    audit = audit_ledger(store, registry, heads, args.incident)
    for report in audit.incidents:
        print(f"{report.incident_id}: {report.events_checked} events, {'verified' if report.ok else 'TAMPERED'}")
    # checkpoints and the external heads catch what per-incident chains cannot: a lost tail, a lost incident
    external = ", ".join(f"{h.name} {h.path}" for h in heads) or "none: a lost tail with its checkpoints goes unseen"
    print(f"checkpoints: {audit.checkpoints.checkpoints_checked} checked; external heads: {external}")
    for finding in audit.findings:
        print(f"  {finding}")
    print("verified" if audit.ok else f"FAILED: {len(audit.findings)} finding(s)")
    return OK if audit.ok else FAILURE


def _incidents(args: argparse.Namespace) -> int:
    from libs.ledger import replay

    settings = load_settings()
    if args.action == "show" and not args.incident:
        raise CliError("incidents show needs an incident id (see: modelguard incidents list)")
    projections = replay(_audit_ledger(settings), _registry(settings))
    if args.action == "list":
        for incident_id, p in sorted(projections.items()):
            print(f"{incident_id}  {p.status:18} {p.event_count:3} events  {p.model_urn}")
        return OK
    if args.incident not in projections:
        raise CliError(f"no incident {args.incident} in the ledger")
    print(json.dumps(projections[args.incident].model_dump(mode="json"), indent=2))
    return OK


def _policy(args: argparse.Namespace) -> int:
    if args.action == "check-central":
        return _check_central(args.target)
    from libs.policy.model_policies.pins import PINS_SERVICE, POLICY_PINS, PolicyPins
    from libs.state.open_state import state_database
    from libs.state.sql_tables import StateUnavailable
    from libs.state.sqlite_state import SqliteState

    settings = load_settings()
    state = state_database(settings)
    if isinstance(state, SqliteState) and not (path := state.path_of(PINS_SERVICE, POLICY_PINS)).exists():
        raise CliError(f"no pinned policies: {path} does not exist (no model has submitted one)")
    try:
        pins = PolicyPins.of(state)
    except StateUnavailable as exc:
        raise CliError(f"the state database ({state.describe()}) does not answer: {exc}") from None
    try:
        if args.action == "pins":
            for pin in pins.all():
                print(f"{pin.model_urn}  sha256:{pin.digest[:12]}  pinned {pin.pinned_at}")
            return OK
        if not args.target:
            raise CliError("policy unpin needs the model's URN (see: modelguard policy pins)")
        if not pins.unpin(args.target):
            raise CliError(f"{args.target} has no pinned policy")
        print(f"unpinned {args.target}: its CI's next submitted policy is pinned")
        return OK
    finally:
        pins.close()


def _check_central(given: str | None) -> int:
    """Every reader of the central policy the services run, on the file ``given`` (central_policy_check.py)."""
    from libs.policy.central import CentralPolicyError
    from modelguard.central_policy_check import check_central_policy

    if not given:
        raise CliError("policy check-central needs the central policy file (e.g. policy/central.yaml)")
    try:
        lines, accepted = check_central_policy(Path(given))
    except CentralPolicyError as exc:
        raise CliError(str(exc)) from None
    print("\n".join(lines))
    return OK if accepted else FAILURE


def _prune_evaluations(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime, timedelta

    from libs.artifacts.record_retention import prune_records
    from libs.artifacts.records import record_store
    from libs.workspace.evaluation_cache import RECORD_SPACE

    records = record_store(load_settings(), RECORD_SPACE)
    pruning = prune_records(records, datetime.now(UTC) - timedelta(days=args.older_than), apply=args.apply)
    stale = f"{pruning.stale} of {pruning.examined} evaluation records in {records.where}"
    age = f"last written over {args.older_than:g} days ago ({_size(pruning.stale_bytes)})"
    if args.apply:
        print(f"removed {stale} {age}")
    else:
        print(f"{stale} were {age}; nothing removed: run again with --apply to remove them")
    return OK


def _size(count: int) -> str:
    size, unit = float(count), "B"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{count} B" if unit == "B" else f"{size:.1f} {unit}"


def _positive_days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not days > 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of days")
    return days


def _emit_mcl(args: argparse.Namespace) -> int:
    import os

    from libs.datahub.mcl.registry_auth import RegistryAuthError, registry_auth_for
    from modelguard.emit_mcl import (
        OFFLINE_SCHEMA_ID,
        ChangeSpecError,
        emit_change,
        encode_change,
        registered_schema_id,
    )
    from modelguard.stack import SCENARIOS, mcl_connection, read_state

    settings = load_settings()
    spec = Path(args.change)
    if not spec.is_file():
        raise CliError(f"{spec} is not a file")
    files = list(settings.datahub_files) or sorted(SCENARIOS.glob("*/datahub/metadata.json"))
    if args.schema_id is not None:
        schema_id = args.schema_id
    elif settings.schema_registry_url:
        try:
            auth = registry_auth_for(os.environ, settings.schema_registry_url)
        except RegistryAuthError as exc:
            raise CliError(str(exc)) from exc
        schema_id = registered_schema_id(settings.schema_registry_url, auth.headers())
    else:
        schema_id = OFFLINE_SCHEMA_ID
    try:
        data, urn = encode_change(spec, files, schema_id)
    except ChangeSpecError as exc:
        raise CliError(str(exc)) from exc
    emit_change(mcl_connection(settings, read_state(settings.home)), args.topic, data, urn)
    print(f"emitted a {len(data)}-byte MCL for {urn} to {args.topic} (schema id {schema_id})")
    return OK


def _require_sandbox() -> None:
    """Workspace code runs only where nothing can be stolen: refuse up front, in one line, without bubblewrap here
    (or, with MODELGUARD_RUNNER, without a workspace runner that answers it is ready)."""
    from libs.workspace.runner import require_workspace_sandbox

    require_workspace_sandbox()


def _investigate(args: argparse.Namespace) -> int:
    from libs.bundle.load import BundleError, load_bundle
    from modelguard.investigate import investigate
    from modelguard.investigation_files import write_investigation
    from modelguard.investigation_outcome import IncompleteInvestigation, investigation_summary

    out = Path(args.out)
    try:
        bundle = load_bundle(Path(args.bundle))
    except BundleError as exc:
        raise CliError(str(exc)) from exc
    settings = load_settings(default_home=out / "home")  # self-contained under --out unless MODELGUARD_HOME
    _require_sandbox()
    _log_environments()

    def show(e: SignedEvent) -> None:
        print(f"  {e.event.meta.event_type:22} {e.event.meta.producer:10} {e.event.meta.event_id}")

    run_id = args.run_id or f"local-{int(time.time())}"
    events = investigate(settings, bundle.root, run_id, args.pull_request, show)
    try:
        summary = investigation_summary(bundle.name, events)
    except IncompleteInvestigation as exc:
        raise CliError(f"{bundle.name}: {exc}") from exc
    write_investigation(out, summary, events)
    diagnosis = summary["diagnosis"] or {}
    if summary["environment"] is not None:
        environment = summary["environment"]
        print(
            f"{bundle.name}: {summary['outcome']} ({environment['revision']} revision, {environment['declaration']}): "
            f"{environment['reason']}; written to {out}"
        )
        return _exit(args, settings, bundle, summary)
    print(
        f"{bundle.name}: {summary['outcome']} (hypothesis {diagnosis.get('hypothesis')}); "
        f"{summary['metric']['name']} {summary['metric']['baseline']} -> {summary['metric']['candidate']}; "
        f"written to {out}"
    )
    return _exit(args, settings, bundle, summary)


def _exit(args: argparse.Namespace, settings: Settings, bundle: Bundle, summary: dict[str, Any]) -> int:
    from modelguard.investigate import ci_policy_for

    if not args.ci:
        return int(summary["exit_code"])
    result = ci_policy_for(settings, bundle).result_for(summary["outcome"])
    print(f"{bundle.name}: CI {result} ({summary['outcome']}, by the central policy's ci.outcomes)")
    return OK if result == "pass" else int(summary["exit_code"]) or FAILURE


def _log_environments() -> None:
    """Workspace environments built or reused (libs/workspace_env) are said on stderr, one line each."""
    import logging

    class CurrentStderr(logging.StreamHandler):
        """Writes to the stderr of the moment, not the one of the first call: a process that calls ``main`` again
        with another stderr (a test, an embedding tool) gets its lines, not an error about a closed stream."""

        @property
        def stream(self) -> object:
            return sys.stderr

        @stream.setter
        def stream(self, _value: object) -> None:
            pass

    logger = logging.getLogger("modelguard.environments")
    if not logger.handlers:
        handler = CurrentStderr()
        handler.setFormatter(logging.Formatter("  %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _demo(args: argparse.Namespace) -> int:
    from modelguard.demo import run_demo
    from modelguard.demo_home import UsedHome, demo_home

    out = Path(args.out)
    try:
        home = demo_home(out)
    except UsedHome as exc:
        raise CliError(str(exc)) from exc
    _require_sandbox()
    return run_demo(out, home)


DIAGNOSIS_SOURCES = ("fixtures/scenarios", "fixtures/repos")


def _bench(args: argparse.Namespace) -> int:
    if args.target == "diagnosis":
        from modelguard.bench_diagnosis import ExpectedFileError, run_diagnosis_bench

        folders = [Path(folder) for folder in (args.folder or DIAGNOSIS_SOURCES)]
        for folder in folders:
            if not folder.is_dir():
                raise CliError(f"{folder} is not a folder of bundles")
        try:
            return run_diagnosis_bench(folders, args.json)
        except ExpectedFileError as exc:
            raise CliError(str(exc)) from None
    if args.target == "environment":
        from modelguard.bench_environment import run_environment_bench

        return run_environment_bench(args.json)
    if args.target == "sandbox-priority":
        from modelguard.bench_sandbox_priority import run_sandbox_priority_bench

        return run_sandbox_priority_bench()
    if args.target == "broker-restart":
        from modelguard.bench import run_broker_restart_bench

        return run_broker_restart_bench()
    if args.target == "chaos":
        from modelguard.bench import run_chaos_bench

        return run_chaos_bench(args.incidents or 20, args.kills)
    if args.target == "replicas":
        from modelguard.bench_replicas import run_replicas_bench

        return run_replicas_bench(args.incidents or 8, args.rounds)
    from modelguard.bench import run_bench

    return run_bench(args.incidents or 20)


def _verify_or_attest(args: argparse.Namespace) -> int:
    if args.attestation is None:
        if args.keys or args.ledger or args.offline or args.envelopes:
            raise CliError("--keys, --envelopes, --ledger and --offline go with --attestation FILE")
        return _verify(args)
    if args.incident:
        raise CliError("give an incident or --attestation FILE, not both")
    if args.without_external_head:
        raise CliError("--without-external-head goes with the ledger check, not --attestation")
    if args.ledger and args.offline:
        raise CliError("--ledger and --offline contradict each other")
    return _verify_attestation(args)


def _verify_attestation(args: argparse.Namespace) -> int:
    from libs.signing.keys import KeyRegistry
    from modelguard.attestation_check import check_attestation
    from modelguard.audit_ledger import reachable_ledger

    settings = load_settings()
    path, keys = Path(args.attestation), Path(args.keys) if args.keys else settings.key_registry_path
    if not path.is_file():
        raise CliError(f"{path} is not a file")
    if not keys.is_file():
        raise CliError(f"no key registry at {keys} (give the public keys with --keys REGISTRY_JSON)")
    envelopes: list[bytes] = []
    if args.envelopes:
        chain = Path(args.envelopes)
        if not chain.is_file():
            raise CliError(f"{chain} is not a file (--envelopes takes one JSON envelope a line)")
        envelopes = [line.strip().encode() for line in chain.read_text().splitlines() if line.strip()]
    ledger = None if args.offline else reachable_ledger(settings.ledger_url)
    report = check_attestation(path.read_bytes(), str(path), KeyRegistry.load(keys), ledger, args.ledger, envelopes)
    print("\n".join(report.lines))
    return OK if report.ok else FAILURE


def _registry(settings: Settings):  # type: ignore[no-untyped-def]
    """The key registry of the home; a command that needs one says so when nothing has run from there yet."""
    from libs.signing.keys import KeyRegistry

    path = settings.key_registry_path
    if not path.is_file():
        raise CliError(
            f"no key registry at {path}: nothing has run from {settings.home} yet "
            "(run `modelguard stack up` or `make demo` first, or set MODELGUARD_HOME to a home that has run)"
        )
    return KeyRegistry.load(path)


def _audit_ledger(settings: Settings) -> LedgerStore:
    from modelguard.audit_ledger import LedgerUnavailable, open_existing_ledger

    try:
        return open_existing_ledger(settings.ledger_url)
    except LedgerUnavailable as exc:
        hint = f": nothing has run from {settings.home} yet" if str(exc).startswith("no ledger at") else ""
        raise CliError(f"{exc}{hint}") from exc


def _replay(args: argparse.Namespace) -> int:
    from modelguard.audit_replay import (
        PROJECTIONS_FILE,
        projection_table,
        projections_document,
        rebuild_projections,
        write_projections,
    )

    settings = load_settings()
    store = _audit_ledger(settings)
    position = store.head_position()
    projections = rebuild_projections(store, _registry(settings))
    print("\n".join(projection_table(projections)))
    target = settings.home / PROJECTIONS_FILE
    write_projections(target, projections_document(projections, position))
    print(f"wrote {len(projections)} incident projection(s), ledger position {position}, to {target}")
    return OK


def _rerun(args: argparse.Namespace) -> int:
    import tempfile

    from modelguard.audit_rerun import rerun_incident, rerun_settings, rerun_table, service_definitions

    settings = load_settings()
    store = _audit_ledger(settings)
    if not store.incident_events(args.incident):
        raise CliError(f"no incident {args.incident} in the ledger")
    registry = _registry(settings)
    with tempfile.TemporaryDirectory(prefix="modelguard-rerun-") as scratch:
        definitions = service_definitions(rerun_settings(settings, Path(scratch)))
        rows = rerun_incident(store, registry, args.incident, definitions, args.run_id)
    if not rows:
        raise CliError(
            f"{args.incident} has no logged event of a deterministic phase"
            + (f" in run {args.run_id}" if args.run_id else "")
        )
    print("\n".join(rerun_table(rows)))
    failed = [r for r in rows if r.failed]
    rerun = [r for r in rows if not r.skipped]
    print(f"{len(rerun) - len(failed)} of {len(rerun)} re-run phase outputs reproduce their logged digest")
    return FAILURE if failed else OK


def _republish(args: argparse.Namespace) -> int:
    import os

    from modelguard.audit_republish import republish_until_moved, resend, resend_lines, unfinished_last_events
    from modelguard.stack import bus_connection, read_state

    settings = load_settings()
    store = _audit_ledger(settings)
    if args.incident and not store.incident_events(args.incident):
        raise CliError(f"no incident {args.incident} in the ledger")
    registry = _registry(settings)
    if args.dry_run:
        print("\n".join(resend_lines(unfinished_last_events(store, registry, args.incident), sent=False)))
        return OK
    if args.wait < 0:
        raise CliError("--wait takes a number of seconds, 0 or more")
    state = read_state(settings.home)
    configured = bool(os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"))
    if not (state or configured) and unfinished_last_events(store, registry, args.incident):
        raise CliError(f"no stack is running from {settings.home} and MODELGUARD_KAFKA_BOOTSTRAP is not set")
    bus = bus_connection(settings, state)
    result = republish_until_moved(
        lambda resends: resend(bus, resends, settings.kafka_idempotence),
        store,
        registry,
        args.incident,
        wait_s=args.wait,
    )
    if result.rounds or not result.failures:
        print("\n".join(resend_lines(result.rounds[0] if result.rounds else [], sent=True)))
    if result.failures:
        print(f"the broker refused {len(result.failures)} send(s), each retried; the last: {result.failures[-1]}")
    if len(result.rounds) > 1:
        print(f"re-sent again {sum(len(r) for r in result.rounds[1:])} time(s) in {len(result.rounds) - 1} round(s)")
    if result.rounds and args.wait > 0:
        print(f"moved on: {len(result.moved)} of {len(result.rounds[0])} incident(s) within {args.wait:g}s")
    if result.failures or (result.rounds and args.wait > 0):
        for incident, event_type in sorted(result.waiting.items()):
            print(f"{incident}  still at {event_type}: a phase may still be working; run republish again later")
    return OK if not result.waiting else FAILURE


def _command(sub: Any, name: str, summary: str, details: str = "") -> argparse.ArgumentParser:
    """A subcommand whose one-line ``summary`` shows in ``modelguard --help`` and, with ``details`` (what it exits
    with), heads its own ``--help``."""
    return sub.add_parser(
        name,
        help=summary,
        description=f"{summary[0].upper()}{summary[1:]}." + (f" {details}" if details else ""),
    )


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="modelguard",
        description=__doc__,
        epilog='exit codes (every command; README, "Exit codes"):\n' + "\n".join(exit_code_lines()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--version", action="version", version=f"modelguard {MODELGUARD_VERSION}")
    sub = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    stack = _command(
        sub,
        "stack",
        "the embedded stack: broker and seven services under a supervisor, in MODELGUARD_HOME",
        "status exits 1 when a service is not running, and prints each service's /metrics address.",
    )
    stack.add_argument(
        "action",
        choices=["up", "down", "status"],
        help="up: start it; down: stop it; status: pid, restarts, last exit and metrics address per service",
    )
    stack.add_argument(
        "--replicas",
        action="append",
        default=[],
        metavar="SERVICE=COUNT",
        help="with up: run COUNT processes of SERVICE in one consumer group (default MODELGUARD_REPLICAS_<SERVICE>, 1)",
    )
    stack.set_defaults(run=_stack)
    submit = _command(
        sub,
        "submit",
        "evaluate a bundle like the model's CI and report it to the running stack",
        "Exit 0 once submitted (with --wait, once the run has finished), 1 when the stack cannot be reached.",
    )
    submit.add_argument(
        "--bundle",
        default="fixtures/scenarios/churn-monthly-spend",
        metavar="DIR",
        help="the bundle folder (docs/scenarios.md; default: %(default)s)",
    )
    submit.add_argument("--run-id", help="the CI run's id (default: local-<unix time>); a retry is a new run id")
    submit.add_argument("--pull-request", type=int, metavar="N", help="the pull request the publication comments on")
    submit.add_argument("--wait", action="store_true", help="wait until the run's last event is in the ledger")
    submit.add_argument(
        "--timeout", type=float, default=600.0, metavar="S", help="with --wait: seconds (default: %(default)s)"
    )
    submit.set_defaults(run=_submit)
    verify = _command(
        sub,
        "verify",
        "check every hash, signature and causation link in the ledger, or an attestation with --attestation",
        "One line per finding, naming its incident; exit 1 on any finding.",
    )
    verify.add_argument("incident", nargs="?", help="only this incident (default: the whole ledger)")
    verify.add_argument("--attestation", metavar="FILE", help="check a signed attestation offline with the public keys")
    verify.add_argument(
        "--keys", metavar="REGISTRY_JSON", help="public keys (default: $MODELGUARD_HOME/keys/registry.json)"
    )
    verify.add_argument(
        "--without-external-head",
        action="store_true",
        help="do not compare with the head file in MODELGUARD_HOME (when this home is not the ledger service's)",
    )
    verify.add_argument(
        "--envelopes",
        metavar="FILE",
        help="with --attestation: the causal chain's envelopes, one JSON envelope a line, each verified offline",
    )
    verify.add_argument("--ledger", action="store_true", help="with --attestation: require the ledger cross-check")
    verify.add_argument("--offline", action="store_true", help="with --attestation: never consult the ledger")
    verify.set_defaults(run=_verify_or_attest)
    replay = _command(
        sub,
        "replay",
        "rebuild every incident's projection from the ledger, print them, write $MODELGUARD_HOME/projections.json",
    )
    replay.set_defaults(run=_replay)
    rerun = _command(
        sub,
        "rerun",
        "re-execute an incident's deterministic phases from the log and compare payload digests",
        "Publishes nothing; exit 1 on a mismatch.",
    )
    rerun.add_argument("incident", help="the incident id (see: modelguard incidents list)")
    rerun.add_argument("--run", dest="run_id", metavar="RUN_ID", help="only the phases of this CI run")
    rerun.set_defaults(run=_rerun)
    republish = _command(
        sub,
        "republish",
        "re-send the last event of unfinished incidents (recovery after a broker loss)",
        "Exit 1 when an incident has not moved on within --wait.",
    )
    republish.add_argument("--incident", help="only this incident")
    republish.add_argument("--dry-run", action="store_true", help="say what would be re-sent, send nothing")
    republish.add_argument(
        "--wait",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds to watch each incident move on, re-sending those that do not (0: send once); exit 1 when "
        "one has not moved by then (default: %(default)s)",
    )
    republish.set_defaults(run=_republish)
    incidents = _command(sub, "incidents", "incidents rebuilt from the ledger by replay")
    incidents.add_argument("action", choices=["list", "show"], help="list: one line each; show: one as JSON")
    incidents.add_argument("incident", nargs="?", help="with show: the incident id")
    incidents.set_defaults(run=_incidents)
    policy = _command(
        sub,
        "policy",
        "the policies models' CI submitted, pinned by the detector; check-central: a central policy file, read by "
        "every reader of it the services run",
        "pins and unpin exit 2 when nothing is pinned or the model has no pin. check-central prints one line per "
        "reader (ok, or FAIL with the section and the reader's words) and notes sections left to the code's "
        "defaults; exit 1 when a reader refuses the file, 2 when it is not a readable YAML mapping.",
    )
    policy.add_argument(
        "action",
        choices=["pins", "unpin", "check-central"],
        help="pins: list them; unpin: remove a model's pin; check-central: check a central policy before deploying it",
    )
    policy.add_argument(
        "target", nargs="?", metavar="URN|FILE", help="unpin: the model's DataHub URN; check-central: the policy file"
    )
    policy.set_defaults(run=_policy)
    emit = _command(sub, "emit-mcl", "put an upstream change on DataHub's MCL topic, encoded as DataHub does")
    emit.add_argument("change", help="a change file, e.g. fixtures/scenarios/*/datahub/changes/*.yaml")
    emit.add_argument("--topic", default="MetadataChangeLog_Versioned_v1", help="the topic (default: %(default)s)")
    emit.add_argument(
        "--schema-id", type=int, metavar="N", help="default: from MODELGUARD_SCHEMA_REGISTRY_URL, else the SDK's"
    )
    emit.set_defaults(run=_emit_mcl)
    evaluations = _command(
        sub,
        "evaluations",
        "prune: remove the evaluation records (the measured evaluations' cache, beside the artifacts) last written "
        "before --older-than days",
        "Without --apply it only says what it would remove. Records are a cache: one removed is measured again when "
        "next asked for. Exit 1 when the records cannot be listed or removed.",
    )
    evaluations.add_argument("action", choices=["prune"], help="prune: remove records older than --older-than")
    evaluations.add_argument(
        "--older-than", type=_positive_days, required=True, metavar="DAYS", help="age in days since the last write"
    )
    evaluations.add_argument("--apply", action="store_true", help="remove them (default: only say what it would)")
    evaluations.set_defaults(run=_prune_evaluations)
    inv = _command(
        sub,
        "investigate",
        "the whole pipeline on one bundle in this process, no broker",
        "Exit 0 gate_passed, 10 repair_validated, 11 repair_withheld, 12 validation_failed, 13 no_code_repair, "
        "14 abstained, 15 environment_failed (docs/scenarios.md); with --ci, 0 when the central policy passes "
        "the outcome. Each service runs its own runtime over an in-memory Kafka: 1, in one line, when one "
        "dead-letters an input (the services' log lines: HOME/logs/investigate.log).",
    )
    inv.add_argument("bundle", help="a bundle folder (docs/scenarios.md)")
    inv.add_argument("--out", required=True, help="folder for summary.json, the events, the report and the patch")
    inv.add_argument("--run-id", help="the CI run's id (default: local-<unix time>)")
    inv.add_argument("--pull-request", type=int, metavar="N", help="the pull request the incident is about")
    inv.add_argument(
        "--ci",
        action="store_true",
        help="exit by the central policy's ci.outcomes: 0 when it passes the outcome, else the outcome's code",
    )
    inv.set_defaults(run=_investigate)
    demo = _command(
        sub,
        "demo",
        "the churn incident end to end on the embedded stack, then a CI retry and an upstream change",
        "The stack's home is $MODELGUARD_HOME when set (it must not have been used: exit 2), else OUT/stack. "
        "Exit 1 when the ledger or the attestation does not verify or the retry was not a no-op.",
    )
    demo.add_argument("--out", default="out/demo", help="folder for summary.json (default: %(default)s)")
    demo.set_defaults(run=_demo)
    bench = _command(
        sub,
        "bench",
        "benchmarks: pipeline, chaos, broker-restart, replicas, environment, sandbox-priority, diagnosis",
        "pipeline: synthetic incidents through the stack; chaos: the same with services killed; broker-restart: "
        "the broker lost mid-flight; replicas: incidents per minute with one and two diagnoser processes; "
        "environment: a workspace environment built cold and cached; sandbox-priority: a service's share of a "
        "core beside busy sandboxed commands; diagnosis DIR: "
        "accuracy over bundles. Exit 1 when a run lost or duplicated an incident or a bundle failed.",
    )
    bench.add_argument(
        "target",
        nargs="?",
        choices=["pipeline", "chaos", "broker-restart", "replicas", "diagnosis", "environment", "sandbox-priority"],
        default="pipeline",
        help="which benchmark (default: %(default)s)",
    )
    bench.add_argument(
        "folder",
        nargs="*",
        help="with diagnosis: folders of bundles, each scored apart and together "
        "(default fixtures/scenarios fixtures/repos)",
    )
    bench.add_argument(
        "--incidents",
        type=int,
        default=None,
        help="with pipeline or chaos (default 20), replicas (8): how many incidents",
    )
    bench.add_argument("--rounds", type=int, default=2, help="with replicas: runs of one and of two diagnosers each")
    bench.add_argument("--kills", type=int, default=22, help="with chaos: how many SIGKILLs of random services")
    bench.add_argument("--json", action="store_true", help="with diagnosis or environment: machine-readable figures")
    bench.set_defaults(run=_bench)
    from modelguard.guard_command import add_guard_parser

    add_guard_parser(sub)
    from modelguard.console.command import add_console_parser

    add_console_parser(sub)
    from modelguard.keys_command import add_keys_parser

    add_keys_parser(sub)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        return INTERRUPTED
    except BAD_INPUT as exc:
        print(f"modelguard {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (SettingsError, KafkaError, OSError, ValueError, RuntimeError, LookupError) as exc:
        print(f"modelguard {args.command}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILURE


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
