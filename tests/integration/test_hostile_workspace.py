"""A hostile workspace: its command really attempts each attack a pull request could carry, through
``run_command`` (as the diagnoser, the validator and the CLI run it) under the central policy's sandbox
section, on a ModelGuard-like layout: a MODELGUARD_HOME with signing keys, the key registry, the ledger and
the artifact store, a stand-in for ``/etc/modelguard/signing`` (hidden through the policy's
``sandbox.hidden``), the evaluation data with its labels next to the revision, a listening port standing in
for the broker. Each attack is contained (the secret never shows up in anything the command produced, no
file outside its scratch and outputs changes) and reported with its reason.

The attacks need bubblewrap, the only mechanism that can hide files (CI installs it). Without it ModelGuard
refuses to run workspace code at all (tests/integration/test_sandbox_containment.py checks that); here the
suite skips, and fails under CI."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from libs.policy.sandbox import GIB, MIB
from libs.sandbox.isolation import probe_isolation
from libs.workspace.runner import CommandResult, CommandTimedOut, run_command

REPO = Path(__file__).resolve().parents[2]
SECRET = f"modelguard-secret-{uuid.uuid4().hex}"
LABELS = "customer_id,monthly_spend,churned\n1,10.5,1\n2,99.0,0\n"
FEATURES = "customer_id,monthly_spend\n1,10.5\n2,99.0\n"
MAX_PROCESSES = 256
STORM_BOUND = 300
ISOLATION = probe_isolation("auto")


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    if ISOLATION.mechanism != "bwrap":
        message = f"bubblewrap unavailable: {ISOLATION.reason}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


ATTACK = r"""
import glob, json, os, socket, sys, time

def read(path):
    try:
        with open(path, "rb") as handle:
            return "READ " + handle.read(4096).decode("utf-8", "replace")
    except OSError as error:
        return f"ERR {type(error).__name__} {error.strerror}"

def walk(folder):
    seen = []
    for root, dirs, files in os.walk(folder):
        seen += [os.path.join(root, name) for name in files]
    return seen

def env_token(targets):
    found = [name for name, value in os.environ.items() if targets["secret"] in value]
    for path in glob.glob("/proc/[0-9]*/environ"):
        if targets["secret"] in read(path):
            found.append(path)
    return {"found": found, "environment": sorted(os.environ)}

def read_files(targets):
    return {path: read(path) for path in targets["read"]}

def read_arguments(targets):
    return {path: read(path) for path in sys.argv[2:]}

def list_homes(targets):
    interpreter = os.path.realpath(sys.base_prefix) + "/"
    files = [path for path in walk("/root") + walk("/home") if not path.startswith(interpreter)]
    return {"files": files, "contents": {path: read(path) for path in files}}

def write_outside(targets):
    results = {}
    for path in targets["write"]:
        try:
            with open(path, "a") as handle:
                handle.write(targets["secret"])
            results[path] = "WROTE"
        except OSError as error:
            results[path] = f"ERR {error.strerror}"
    return results

def connect(targets):
    try:
        socket.create_connection(("127.0.0.1", targets["port"]), timeout=5).sendall(targets["secret"].encode())
        return {"connected": True}
    except OSError as error:
        return {"connected": False, "error": f"{type(error).__name__} {error.strerror}"}

def fork_storm(targets):
    started, refused = 0, None
    for _ in range(1000):
        try:
            pid = os.fork()
        except OSError as error:
            refused = error.strerror
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        started += 1
    print(json.dumps({"attack": "fork_storm", "started": started, "refused": refused}), flush=True)
    os._exit(0)

def allocate(targets):
    block = bytearray(20 * 1024**3)
    block[:: 4096] = b"x" * len(block[:: 4096])
    return {"allocated": len(block)}

def allocate_in_processes(targets):
    # six children of 200 MiB each, all held until the first one ends (the kernel's OOM kill)
    release_read, release_write = os.pipe()
    for _ in range(6):
        if os.fork() == 0:
            os.close(release_write)
            block = bytearray(200 * 1024**2)
            for offset in range(0, len(block), 4096):
                block[offset] = 1
            os.read(release_read, 1)
            os._exit(0)
    first = os.wait()
    os.close(release_write)
    for _ in range(5):
        os.wait()
    return {"first_end": os.waitstatus_to_exitcode(first[1])}

def flood(targets):
    chunk = "x" * (1024 * 1024)
    for _ in range(1024):
        sys.stdout.write(chunk)
    return {"flooded": True}

def oversleep(targets):
    time.sleep(600)
    return {"slept": True}

targets = json.load(open("targets.json"))
attack = sys.argv[1]
print(json.dumps({"attack": attack, "result": globals()[attack](targets)}))
"""


@dataclass(frozen=True)
class Layout:
    """ModelGuard's files as a deployment lays them out, and the revision the attack runs in."""

    root: Path
    home: Path
    keys: Path
    signing: Path
    revision: Path
    labels: Path
    features: Path
    outputs: Path

    @property
    def secret_files(self) -> list[Path]:
        return [
            self.keys / "validator.key",
            self.keys / "registry.json",
            self.home / "ledger.sqlite",
            self.home / "artifacts" / "sha256-0001",
            self.signing / "ledger.key",
            self.labels,
        ]


def _write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    home = tmp_path / "modelguard-home"
    keys = home / "keys"
    signing = tmp_path / "etc-modelguard" / "signing"
    for path in (keys / "validator.key", home / "ledger.sqlite", home / "artifacts" / "sha256-0001"):
        _write(path, SECRET, 0o600)
    _write(keys / "registry.json", json.dumps({"validator": SECRET}))
    _write(signing / "ledger.key", SECRET, 0o644)
    workspace = home / "state" / "diagnoser" / "scratch" / "workspace-1"
    revision = workspace / "base"
    labels = _write(workspace / "data" / "incident" / "eval.csv", LABELS + f"3,{SECRET},1\n")
    features = _write(workspace / "features" / "incident.csv", FEATURES)
    _write(workspace / "features" / "approval.csv", LABELS + f"3,{SECRET},1\n")  # next to the input
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    _write(revision / "attack.py", ATTACK)
    central = tmp_path / "central.yaml"
    policy = {
        "sandbox": {
            "limits": {
                "cpu_s": 20,
                "memory_bytes": 1 * GIB,
                "wall_s": 30,
                "output_bytes": 4 * MIB,
                "file_size_bytes": 64 * MIB,
                "max_processes": MAX_PROCESSES,
            },
            "hidden": [str(signing.parent)],
        }
    }
    central.write_text(yaml.safe_dump(policy), encoding="utf-8")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    monkeypatch.setenv("MODELGUARD_HOME", str(home))
    return Layout(tmp_path, home, keys, signing, revision, labels, features, outputs)


def attack(layout: Layout, name: str, *arguments: str, timeout_s: float = 30, **targets: object) -> CommandResult:
    _write(layout.revision / "targets.json", json.dumps({"secret": SECRET, **targets}))
    return run_command(["python", "attack.py", name, *arguments], cwd=layout.revision, timeout_s=timeout_s)


def outcome(result: CommandResult) -> dict[str, object]:
    lines = [line for line in result.stdout.splitlines() if line.startswith('{"attack"')]
    assert lines, f"the attack printed nothing: {result.stderr[-2000:]}"
    return json.loads(lines[-1])


def assert_no_leak(result: CommandResult) -> None:
    assert SECRET not in result.stdout + result.stderr


# tokens in ModelGuard's environment

DRIVER = """
import json, sys
from pathlib import Path
from libs.workspace.runner import run_command
result = run_command(["python", "attack.py", "env_token"], cwd=Path(sys.argv[1]), timeout_s=30)
print(json.dumps({"stdout": result.stdout, "stderr": result.stderr, "mechanism": result.sandbox.mechanism}))
"""


def test_a_token_in_modelguards_environment_is_not_in_the_commands_nor_readable_from_proc(layout: Layout) -> None:
    _write(layout.revision / "targets.json", json.dumps({"secret": SECRET}))
    tokens = {"GITHUB_TOKEN": SECRET, "MODELGUARD_GITHUB_TOKEN": SECRET, "DATAHUB_GMS_TOKEN": SECRET}
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER, str(layout.revision)],
        cwd=REPO,
        env={**os.environ, **tokens},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(driver.stdout.strip().splitlines()[-1])
    assert seen["mechanism"] == "bwrap"
    result = json.loads(seen["stdout"].strip().splitlines()[-1])["result"]
    assert result["found"] == [], "neither the environment nor /proc/*/environ may hold the token"
    assert not {"GITHUB_TOKEN", "MODELGUARD_GITHUB_TOKEN", "DATAHUB_GMS_TOKEN"} & set(result["environment"])
    assert SECRET not in seen["stdout"] + seen["stderr"]


# keys, the registry, the ledger, the artifact store, /etc/modelguard, the labels


def test_modelguards_keys_ledger_artifacts_and_policy_hidden_paths_cannot_be_read(layout: Layout) -> None:
    targets = [*map(str, layout.secret_files), str(layout.keys), str(layout.home)]
    result = attack(layout, "read_files", read=targets)
    reads = outcome(result)["result"]
    assert isinstance(reads, dict)
    assert all(not value.startswith("READ") or SECRET not in value for value in reads.values()), reads
    assert all(value.startswith("ERR") for path, value in reads.items() if path in map(str, layout.secret_files))
    assert_no_leak(result)
    assert str(layout.signing.parent) in result.sandbox.hidden  # type: ignore[union-attr]
    assert result.sandbox.mechanism == "bwrap"  # type: ignore[union-attr]


def test_naming_a_key_on_the_command_line_does_not_make_it_readable_and_fails_the_run(layout: Layout) -> None:
    key, ledger_key = layout.keys / "validator.key", layout.signing / "ledger.key"
    result = attack(layout, "read_arguments", str(key), str(ledger_key))
    reads = outcome(result)["result"]
    assert isinstance(reads, dict) and all(value.startswith("ERR") for value in reads.values()), reads
    assert_no_leak(result)
    assert not result.succeeded
    reason = result.failure_reason or ""
    assert "the sandbox did not show these arguments" in reason
    assert f"{key}: inside the protected {layout.keys}" in reason
    assert f"{ledger_key}: inside the protected {layout.signing.parent}" in reason


def test_the_labels_next_to_the_revision_cannot_be_read_only_the_declared_input(layout: Layout) -> None:
    relative = "../data/incident/eval.csv"
    sibling = str(layout.features.with_name("approval.csv"))
    result = attack(layout, "read_files", str(layout.features), read=[relative, str(layout.labels), sibling])
    reads = outcome(result)["result"]
    assert isinstance(reads, dict)
    assert all(value.startswith("ERR FileNotFoundError") for value in reads.values()), reads
    declared = attack(layout, "read_arguments", str(layout.features))
    assert outcome(declared)["result"] == {str(layout.features): "READ " + FEATURES}
    assert declared.succeeded and declared.sandbox.inputs == (str(layout.features),)  # type: ignore[union-attr]


def test_shadow_sudoers_and_ssh_host_keys_cannot_be_read(layout: Layout) -> None:
    system = ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh/ssh_host_ed25519_key"]
    result = attack(layout, "read_files", read=system)
    reads = outcome(result)["result"]
    assert isinstance(reads, dict)
    assert all(value in ("READ ",) or value.startswith("ERR") for value in reads.values()), reads
    assert "/etc/shadow" in result.sandbox.hidden  # type: ignore[union-attr]


@pytest.fixture
def planted_in_homes() -> Iterator[list[Path]]:
    """A secret in ModelGuard's user's home (a dot-entry and a plain file) and in a folder of /home."""
    name = f".modelguard-hostile-{uuid.uuid4().hex}"
    planted = [Path.home() / name, Path.home() / name.lstrip(".")]
    other_home = Path("/home") / name.lstrip(".")
    if Path("/home").is_dir() and os.access("/home", os.W_OK):
        planted.append(other_home / ".ssh" / "id_ed25519")
    try:
        for path in planted:
            _write(path, SECRET, 0o600)
        yield planted
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
        for folder in (other_home / ".ssh", other_home):
            if folder.exists():
                folder.rmdir()


def test_root_and_home_show_nothing_but_the_interpreter(layout: Layout, planted_in_homes: list[Path]) -> None:
    result = attack(layout, "list_homes")
    seen = outcome(result)["result"]
    assert isinstance(seen, dict)
    assert seen["files"] == [], "only the interpreter's installation may show under /root or /home"
    assert_no_leak(result)


# writes outside the scratch folder and the outputs


def test_writes_outside_scratch_and_outputs_change_nothing(layout: Layout) -> None:
    marker = f"modelguard-hostile-{uuid.uuid4().hex}"
    targets = [
        REPO / f"{marker}.py",  # ModelGuard's checkout
        layout.keys / "registry.json",
        layout.home / "ledger.sqlite",
        layout.revision / "attack.py",  # the revision itself
        layout.revision.parent / f"{marker}.py",  # next to the revision: the other revision's folder
        layout.labels,
        layout.features,  # the declared input
        Path(f"/etc/{marker}"),
        Path(f"/tmp/{marker}"),
        Path.home() / f".{marker}",
    ]
    before = {path: path.read_bytes() if path.exists() else None for path in targets}
    result = attack(layout, "write_outside", str(layout.features), write=list(map(str, targets)))
    writes = outcome(result)["result"]
    assert isinstance(writes, dict)
    assert all(writes[str(path)].startswith("ERR") for path in targets), writes
    assert {path: path.read_bytes() if path.exists() else None for path in targets} == before
    assert result.sandbox.workspace_changes.unchanged  # type: ignore[union-attr]


def test_an_output_folder_is_writable_and_only_new_files_come_back(layout: Layout) -> None:
    existing = layout.outputs / "existing.csv"
    _write(existing, "ModelGuard's own\n")
    layout.outputs.chmod(0o700)  # root's, mode 0700: the command's uid could not write into it
    predictions = layout.outputs / "predictions.csv"
    write = [str(predictions), str(existing), str(layout.outputs / "extra.csv")]
    result = attack(layout, "write_outside", "--output", str(predictions), write=write)
    assert outcome(result)["result"] == dict.fromkeys(write, "WROTE")
    assert predictions.read_text() == SECRET and (layout.outputs / "extra.csv").read_text() == SECRET
    assert existing.read_text() == "ModelGuard's own\n", "a file the command line did not name is never replaced"
    assert not result.succeeded
    assert f"{existing}: a file is already there" in (result.failure_reason or "")


# the network


def test_no_connection_reaches_a_port_on_the_machines_loopback(layout: Layout) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        result = attack(layout, "connect", port=listener.getsockname()[1])
        readable, _, _ = select.select([listener], [], [], 0)  # the command has ended: any connection is queued
    assert readable == [], "the connection must never arrive"
    seen = outcome(result)["result"]
    assert isinstance(seen, dict) and seen["connected"] is False
    assert result.sandbox.network_isolation.startswith("enforced")  # type: ignore[union-attr]


# resources


def _sandbox_processes(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_fork_storm_is_bounded_and_reported(layout: Layout) -> None:
    result = attack(layout, "fork_storm", timeout_s=60)
    seen = outcome(result)
    assert isinstance(seen["started"], int) and seen["started"] <= STORM_BOUND, seen
    assert seen["refused"] == "Resource temporarily unavailable"
    report = result.sandbox
    assert report is not None and report.limit_exceeded == "processes"
    assert f"exceeded the process limit of {MAX_PROCESSES} processes" in (result.failure_reason or "")
    if report.processes_peak is not None:
        assert report.processes_peak <= MAX_PROCESSES
    assert report.process_limit.startswith("enforced"), report.process_limit
    deadline = time.monotonic() + 10
    while _sandbox_processes(str(layout.revision / "attack.py")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sandbox_processes(str(layout.revision / "attack.py")) == [], "nothing of the storm is left"


def test_a_20_gib_allocation_fails_at_the_memory_limit(layout: Layout) -> None:
    result = attack(layout, "allocate")
    assert result.limit_exceeded == "memory"
    assert f"exceeded the memory limit of {GIB} bytes" in (result.failure_reason or "")


def test_processes_that_together_pass_the_memory_limit_are_stopped_where_a_cgroup_counts_them(
    layout: Layout,
) -> None:
    try:
        result = attack(layout, "allocate_in_processes", timeout_s=20)
    except CommandTimedOut as timed_out:
        assert timed_out.sandbox is not None
        if not timed_out.sandbox.memory_limit.startswith("enforced"):
            pytest.skip(f"no memory cgroup here: {timed_out.sandbox.memory_limit}")
        raise
    report = result.sandbox
    assert report is not None and report.memory_limit.startswith("enforced"), report
    assert report.limit_exceeded == "memory", result.stderr[-2000:]
    assert outcome(result)["result"] == {"first_end": -9}, "the kernel killed one of them"


def test_a_gigabyte_of_output_is_cut_at_the_output_limit(layout: Layout) -> None:
    result = attack(layout, "flood")
    assert result.limit_exceeded == "output"
    assert len(result.stdout) + len(result.stderr) <= 4 * MIB + 1024


def test_sleeping_past_the_timeout_is_stopped(layout: Layout) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimedOut) as raised:
        attack(layout, "oversleep", timeout_s=2)
    assert time.monotonic() - started < 20
    assert raised.value.sandbox is not None and raised.value.sandbox.limit_exceeded == "wall_time"
    assert "exceeded the wall-time limit of 2 s" in raised.value.stderr


def test_the_command_runs_unprivileged_with_its_limits_reported(layout: Layout) -> None:
    result = attack(layout, "read_files", read=[])
    report = result.sandbox
    assert result.succeeded and report is not None
    if os.getuid() == 0:
        assert report.identity.startswith("uid 65534"), report.identity
    for text in (report.process_limit, report.memory_limit, report.cpu_limit):
        assert text.startswith(("enforced", "per process only", "not enforced")), text


def test_the_attack_program_is_what_runs(layout: Layout) -> None:
    """Guards the suite itself: the hostile program runs and answers (a broken one would pass every test)."""
    result = attack(layout, "read_files", read=[str(layout.revision / "targets.json")])
    reads = outcome(result)["result"]
    assert isinstance(reads, dict)
    assert reads[str(layout.revision / "targets.json")].startswith("READ {")
    assert textwrap.dedent(ATTACK).strip() == (layout.revision / "attack.py").read_text().strip()
