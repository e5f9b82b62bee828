"""Sandbox containment with real workspaces: code that reads a token, writes outside its copy, opens a
socket, loops forever, allocates far beyond its memory limit, prints without end, writes a huge file or
forks without end. Each run is contained and reported as failed with its reason, and this process and the
machine are fine afterwards (no process of the workspace is left, nothing outside the copy was written)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import sysconfig
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from libs.sandbox.copy import copy_workspace
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.limits import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox.run import SandboxResult, run_sandboxed
from libs.workspace.runner import CommandTimedOut, run_command

REPO = Path(__file__).resolve().parents[2]
LIMITS = SandboxLimits(
    cpu_s=2, memory_bytes=512 * MIB, wall_s=4, output_bytes=1 * MIB, file_size_bytes=1 * MIB, max_processes=32
)
ISOLATION = probe_isolation("auto")
needs_isolation = pytest.mark.skipif(not ISOLATION.network, reason=f"no isolation on this machine: {ISOLATION.reason}")
needs_bwrap = pytest.mark.skipif(not ISOLATION.filesystem, reason=f"bubblewrap unavailable: {ISOLATION.reason}")
SECRET = "secret-xyz"


@pytest.fixture
def marker() -> str:
    """A word on the workspace's command line, to find any of its processes left behind."""
    return f"modelguard-containment-{uuid.uuid4().hex}"


def workspace(tmp_path: Path, code: str) -> Path:
    """A workspace whose ``run.py`` is ``code``, copied the way the validator copies one."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "run.py").write_text(textwrap.dedent(code), encoding="utf-8")
    (source / ".git").mkdir()
    return copy_workspace(source, tmp_path / "copy")


def run(copy: Path, marker: str, *, isolation: str = "auto", limits: SandboxLimits = LIMITS) -> SandboxResult:
    policy = SandboxPolicy(limits=limits, isolation=isolation)  # type: ignore[arg-type]
    return run_sandboxed(["python", "run.py", marker], copy, policy)


def leftovers(marker: str) -> list[int]:
    """Processes anywhere on the machine whose command line carries ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def assert_contained(result: SandboxResult, marker: str, reason: str) -> None:
    assert result.failed
    assert reason in (result.failure_reason or ""), result.failure_reason
    deadline = time.monotonic() + 2
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(marker) == []


# reads a token from the environment

TOKEN_READER = """
    import glob, os, sys
    in_environment = [name for name, value in os.environ.items() if "secret-xyz" in value]
    in_processes = []
    for path in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(path, "rb") as handle:
                if b"secret-xyz" in handle.read():
                    in_processes.append(path)
        except OSError:
            pass
    print("ENV", sorted(os.environ), "FOUND", in_environment, "PROC", in_processes)
    token = os.environ["MODELGUARD_GITHUB_TOKEN"]
"""
DRIVER = """
import json, sys
from pathlib import Path
from libs.sandbox.limits import SandboxLimits, SandboxPolicy
from libs.sandbox.run import run_sandboxed
policy = SandboxPolicy(limits=SandboxLimits(wall_s=20))
result = run_sandboxed(["python", "run.py", sys.argv[2]], Path(sys.argv[1]), policy)
print(json.dumps({"stdout": result.stdout, "stderr": result.stderr, "reason": result.failure_reason}))
"""


def test_a_token_in_modelguards_environment_never_reaches_the_workspace(tmp_path: Path, marker: str) -> None:
    copy = workspace(tmp_path, TOKEN_READER)
    env = {**os.environ, "MODELGUARD_GITHUB_TOKEN": SECRET, "GITHUB_TOKEN": SECRET, "DATAHUB_GMS_TOKEN": SECRET}
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER, str(copy), marker],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(driver.stdout.strip().splitlines()[-1])
    assert "FOUND []" in seen["stdout"]
    assert "KeyError: 'MODELGUARD_GITHUB_TOKEN'" in seen["stderr"]
    assert seen["reason"] == "exit 1"
    assert SECRET not in seen["stdout"] + seen["stderr"]
    if ISOLATION.processes:
        assert "PROC []" in seen["stdout"], "the workspace must not see ModelGuard's processes"
    assert leftovers(marker) == []


# writes outside its copy


@needs_bwrap
def test_writes_outside_the_copy_are_refused(tmp_path: Path, marker: str) -> None:
    outside = tmp_path / "outside.txt"
    real_home = Path.home() / f"{marker}.txt"
    copy = workspace(
        tmp_path,
        f"""
        import os
        refused = []
        for target in ({str(outside)!r}, {str(real_home)!r}, "escape.txt", "/etc/{marker}"):
            try:
                with open(target, "w") as handle:
                    handle.write("x")
            except OSError as error:
                refused.append((target, error.strerror))
        with open(os.path.join(os.environ["HOME"], ".bashrc"), "w") as handle:
            handle.write("allowed: HOME is the sandbox's scratch folder")
        raise SystemExit(f"refused: {{refused}}")
        """,
    )
    result = run(copy, marker)
    assert_contained(result, marker, "exit 1")
    assert result.stderr.count("Read-only file system") == 4
    assert not outside.exists() and not real_home.exists() and not (copy / "escape.txt").exists()
    assert not Path(f"/etc/{marker}").exists()
    assert result.report.filesystem_isolation.startswith("enforced")
    assert result.report.scratch_writes == ("home/.bashrc",)
    assert result.report.workspace_changes.unchanged


@needs_bwrap
def test_modelguards_keys_on_disk_are_hidden(tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "modelguard-home"
    (state / "keys").mkdir(parents=True)
    (state / "keys" / "validator.key").write_text(SECRET)
    monkeypatch.setenv("MODELGUARD_HOME", str(state))
    copy = workspace(tmp_path, f"print(open({str(state / 'keys' / 'validator.key')!r}).read())\n")
    result = run(copy, marker)
    assert_contained(result, marker, "exit 1")
    assert "FileNotFoundError" in result.stderr and SECRET not in result.stdout


@pytest.mark.parametrize("isolation", ["unshare", "none"])
def test_without_a_read_only_view_writes_are_detected_and_fail_the_run(
    tmp_path: Path, marker: str, isolation: str
) -> None:
    copy = workspace(
        tmp_path,
        """
        import os
        with open("model.pkl", "wb") as handle:
            handle.write(b"written into the copy")
        with open(os.path.join(os.environ["HOME"], ".cache"), "w") as handle:
            handle.write("x")
        """,
    )
    result = run(copy, marker, isolation=isolation)
    if isolation == "unshare" and probe_isolation("unshare").mechanism != "unshare":
        pytest.skip("unshare does not work here")
    assert_contained(result, marker, "the command changed its workspace: created model.pkl")
    assert result.returncode == 0
    assert result.report.filesystem_isolation.startswith("not enforced")
    assert result.report.scratch_writes == ("home/.cache",)


# opens a socket


CONNECT = """
    import socket
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"exfiltrated")
    print("CONNECTED")
"""


@needs_isolation
def test_no_connection_leaves_the_sandbox(tmp_path: Path, marker: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.5)
        copy = workspace(tmp_path, CONNECT.format(port=listener.getsockname()[1]))
        result = run(copy, marker)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert_contained(result, marker, "exit 1")
    assert "CONNECTED" not in result.stdout
    assert "ConnectionRefusedError" in result.stderr or "Network is unreachable" in result.stderr
    assert result.report.network_isolation.startswith(f"enforced ({ISOLATION.mechanism}")


def test_without_isolation_the_result_says_the_network_was_open(tmp_path: Path, marker: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(5)
        copy = workspace(tmp_path, CONNECT.format(port=listener.getsockname()[1]))
        result = run(copy, marker, isolation="none")
        connection, _ = listener.accept()
        connection.close()
    assert result.report.network_isolation == "unavailable (isolation disabled by the sandbox policy)"
    assert result.report.mechanism == "none"


# loops forever


def test_a_busy_loop_is_stopped_by_the_cpu_limit(tmp_path: Path, marker: str) -> None:
    copy = workspace(tmp_path, "while True:\n    pass\n")
    started = time.monotonic()
    result = run(copy, marker)
    assert time.monotonic() - started < 5
    assert_contained(result, marker, "exceeded the CPU-time limit of 2 s")
    assert result.report.limit_exceeded == "cpu_time"


@needs_isolation
def test_a_sleeping_command_and_its_detached_daemon_are_stopped_by_the_wall_limit(tmp_path: Path, marker: str) -> None:
    copy = workspace(
        tmp_path,
        """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]], start_new_session=True)
        time.sleep(600)
        """,
    )
    started = time.monotonic()
    result = run(copy, marker, limits=LIMITS.model_copy(update={"wall_s": 2}))
    assert time.monotonic() - started < 4
    assert_contained(result, marker, "exceeded the wall-time limit of 2 s")


def test_the_runner_raises_command_timed_out_at_the_wall_limit(tmp_path: Path, marker: str) -> None:
    copy = workspace(tmp_path, "import time\ntime.sleep(600)\n")
    with pytest.raises(CommandTimedOut) as raised:
        run_command(["python", "run.py", marker], cwd=copy, timeout_s=1)
    assert raised.value.timeout_s == 1
    assert raised.value.sandbox is not None and raised.value.sandbox.limit_exceeded == "wall_time"
    assert leftovers(marker) == []


# allocates far beyond the limit


@pytest.mark.parametrize(
    "code",
    ["blob = bytearray(8 * 1024**3)\n", "chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 1024**2))\n"],
    ids=["one-8-GiB-block", "64-MiB-at-a-time"],
)
def test_allocating_beyond_the_memory_limit_fails(tmp_path: Path, marker: str, code: str) -> None:
    copy = workspace(tmp_path, code)
    result = run(copy, marker)
    assert_contained(result, marker, f"exceeded the memory limit of {512 * MIB} bytes")
    assert "MemoryError" in result.stderr


# prints gigabytes


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_printing_gigabytes_is_cut_at_the_output_limit(tmp_path: Path, marker: str, stream: str) -> None:
    copy = workspace(tmp_path, f"import sys\nwhile True:\n    sys.{stream}.write('x' * 1024 * 1024)\n")
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    result = run(copy, marker)
    assert time.monotonic() - started < 3
    assert_contained(result, marker, f"exceeded the output limit of {MIB} bytes")
    assert len(result.stdout) + len(result.stderr) <= MIB
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    assert grown_kib < 64 * 1024, "this process must not hold the flood"


# writes a huge file


def test_a_file_beyond_the_file_size_limit_cannot_be_written(tmp_path: Path, marker: str) -> None:
    copy = workspace(
        tmp_path,
        """
        import os
        with open(os.path.join(os.environ["HOME"], "huge.bin"), "wb") as handle:
            handle.write(b"x" * 16 * 1024**2)
        """,
    )
    result = run(copy, marker)
    assert_contained(result, marker, f"exceeded the file-size limit of {MIB} bytes")


# forks without end (RLIMIT_NPROC: the kernel exempts root, so this runs as an unprivileged user)

FORKER = """
import os, sys, time
for _ in range(500):
    if os.fork() == 0:
        time.sleep(30)
        os._exit(0)
"""
NOBODY_DRIVER = """
import json, sys, tempfile
from pathlib import Path
from libs.sandbox.limits import SandboxLimits, SandboxPolicy
from libs.sandbox.run import run_sandboxed
with tempfile.TemporaryDirectory() as folder:
    (Path(folder) / "run.py").write_text(sys.argv[2])
    limits = SandboxLimits(max_processes=32, wall_s=10)
    result = run_sandboxed(["python", "run.py", sys.argv[1]], Path(folder), SandboxPolicy(limits=limits))
print(json.dumps({"reason": result.failure_reason, "stderr": result.stderr[-500:]}))
"""
NOBODY = 65534


def as_nobody(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=REPO,
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def interpreter_for_nobody() -> tuple[str, dict[str, str]] | None:
    """An interpreter of this Python version the unprivileged user may run, with ModelGuard's packages on its
    path (ModelGuard's own may live in root's home)."""
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "PYTHONPATH": f"{REPO}:{sysconfig.get_paths()['purelib']}",
    }
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not Path(candidate).exists():
            continue
        try:
            probe = as_nobody([candidate, "-c", "import pydantic, yaml, libs.sandbox.run"], env=environment)
        except OSError:
            continue
        if probe.returncode == 0:
            return candidate, environment
    return None


@pytest.mark.skipif(os.getuid() != 0, reason="switching to an unprivileged user needs root")
def test_forking_without_end_is_stopped_by_the_process_limit(marker: str) -> None:
    found = interpreter_for_nobody()
    if found is None:
        pytest.skip("no interpreter of this Python version that an unprivileged user may run")
    interpreter, environment = found
    driver = as_nobody([interpreter, "-c", NOBODY_DRIVER, marker, FORKER], env=environment)
    assert driver.returncode == 0, driver.stderr[-2000:]
    seen = json.loads(driver.stdout.strip().splitlines()[-1])
    assert "exceeded the process limit of 32 more processes" in (seen["reason"] or ""), seen
    deadline = time.monotonic() + 2
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(marker) == []


def test_this_process_is_fine_afterwards(tmp_path: Path) -> None:
    assert os.getcwd() and shutil.disk_usage(tmp_path).free > 0
    result = run_sandboxed(["python", "-c", "print('still here')"], tmp_path, SandboxPolicy(limits=LIMITS))
    assert result.stdout == "still here\n" and not result.failed
