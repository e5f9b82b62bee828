"""The sandbox's mechanics with real commands: it fails closed without bubblewrap, runs unconfined only when
the policy says so (and says so), stops busy loops by CPU time (all processes together), sleepers and their
detached daemons by wall time, huge files by the file-size limit, bounds processes even without a cgroup
(an unprivileged uid's RLIMIT_NPROC), lets a command read an input its uid could not read in place, and
leaves nothing behind: no process, no cgroup, no scratch folder. The attacks of a hostile pull request are in
tests/integration/test_hostile_workspace.py."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import termios
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from libs.policy.sandbox import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox import command_slot, spare_slots
from libs.sandbox.control_groups import PREFIX, CommandCgroup, find_hierarchies
from libs.sandbox.copy import copy_workspace
from libs.sandbox.isolation import Isolation, SandboxUnavailable, probe_isolation
from libs.sandbox.process import session_group_nice
from libs.sandbox.run import SandboxResult, run_sandboxed
from libs.sandbox.spare_slots import close_spares
from libs.workspace.runner import CommandNotAllowed, CommandTimedOut, run_command
from tests.support.waiting import wait_until

LIMITS = SandboxLimits(
    cpu_s=2, memory_bytes=512 * MIB, wall_s=20, output_bytes=1 * MIB, file_size_bytes=1 * MIB, max_processes=64
)
ISOLATION = probe_isolation("auto")
needs_bwrap = pytest.mark.skipif(ISOLATION.mechanism != "bwrap", reason=f"bubblewrap unavailable: {ISOLATION.reason}")
UNCONFINED = SandboxPolicy(limits=LIMITS, isolation="none", allow_unconfined=True)


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


def run(copy: Path, marker: str, policy: SandboxPolicy | None = None, *arguments: str) -> SandboxResult:
    return run_sandboxed(["python", "run.py", marker, *arguments], copy, policy or SandboxPolicy(limits=LIMITS))


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
    deadline = time.monotonic() + 10
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(marker) == []


# fails closed


def test_without_bubblewrap_no_command_runs_and_the_one_line_says_how_to_install_it(tmp_path: Path) -> None:
    copy = workspace(tmp_path, "open('ran', 'w')\n")
    missing = probe_isolation("auto", bwrap="modelguard-no-such-bwrap")
    with pytest.raises(SandboxUnavailable) as refused:
        run_sandboxed(["python", "run.py"], copy, SandboxPolicy(limits=LIMITS), isolation=missing)
    message = str(refused.value)
    assert "\n" not in message
    assert "bwrap not installed" in message and "apt-get install bubblewrap" in message
    assert "sandbox.allow_unconfined: true" in message
    assert not (copy / "ran").exists()


def test_a_bubblewrap_that_fails_its_probe_refuses_like_a_missing_one(tmp_path: Path) -> None:
    failing = shutil.which("false")
    assert failing is not None
    isolation = probe_isolation("bwrap", bwrap=failing)
    assert isolation.mechanism == "none" and failing in isolation.reason
    with pytest.raises(SandboxUnavailable, match="refused to run workspace code"):
        run_sandboxed(["python", "-c", "pass"], tmp_path, SandboxPolicy(limits=LIMITS), isolation=isolation)


@needs_bwrap
def test_a_refused_command_leaves_no_process_and_no_cgroup(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The held shell starts before the command is checked (it is confined while the view is prepared): a refusal
    kills it before it has run anything, and its cgroup goes with it. (No spare slots: they are cgroups too.)"""
    monkeypatch.setattr(spare_slots, "SPARES", 0)
    close_spares()
    copy = workspace(tmp_path, "open('ran', 'w')\n")
    cgroups_before = _command_cgroups()
    hidden = SandboxPolicy(limits=LIMITS, hidden=[str(copy)])  # the workspace itself is a protected secret
    with pytest.raises(CommandNotAllowed, match="lies inside the protected"):
        run(copy, marker, hidden)
    assert leftovers(marker) == []  # reaped before the refusal came out
    assert not (copy / "ran").exists()
    assert sorted(_command_cgroups()) == sorted(cgroups_before)


@needs_bwrap
def test_a_command_s_staging_folder_goes_once_it_is_done(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its scratch and output folders were mounted into its view; they are removed off its path, and soon."""
    copy = workspace(tmp_path, "import os, sys; open(os.path.join(os.environ['HOME'], 'left'), 'w')\n")
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    result = run(copy, marker)
    assert result.returncode == 0, result.stderr
    assert result.report.scratch_writes == ("home/left",)
    assert wait_until(lambda: not list(temporary.glob("modelguard-run-*")), 30), list(temporary.iterdir())


def test_isolation_none_in_the_policy_refuses_through_the_runner_unless_unconfined_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(CommandNotAllowed, match="isolation disabled by the sandbox policy"):
        run_command(["python", "-c", "pass"], cwd=tmp_path, timeout_s=10, policy=SandboxPolicy(isolation="none"))
    result = run_command(["python", "-c", "print('ran')"], cwd=tmp_path, timeout_s=10, policy=UNCONFINED)
    assert result.stdout == "ran\n" and result.succeeded
    assert result.sandbox is not None and result.sandbox.mechanism == "none"


def test_an_unconfined_run_says_the_network_and_files_were_open(tmp_path: Path, marker: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {listener.getsockname()[1]})).close()\n"
        result = run(workspace(tmp_path, code), marker, UNCONFINED)
        connection, _ = listener.accept()
        connection.close()
    report = result.report
    assert report.mechanism == "none" and not result.failed
    assert report.network_isolation == "unavailable (isolation disabled by the sandbox policy)"
    assert report.filesystem_isolation.startswith("not enforced")
    assert report.identity.endswith("unconfined")


def test_unconfined_writes_to_the_workspace_are_detected_and_fail_the_run(tmp_path: Path, marker: str) -> None:
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
    result = run(copy, marker, UNCONFINED)
    assert_contained(result, marker, "the command changed its workspace: created model.pkl")
    assert result.returncode == 0
    assert result.report.scratch_writes == ("home/.cache",)


# CPU, wall time, file size


@pytest.mark.parametrize("workers", [1, 4])
def test_busy_loops_are_stopped_at_the_cpu_limit(tmp_path: Path, marker: str, workers: int) -> None:
    copy = workspace(
        tmp_path,
        f"""
        import os
        for _ in range({workers} - 1):
            if os.fork() == 0:
                break
        while True:
            pass
        """,
    )
    result = run(copy, marker)
    assert_contained(result, marker, "exceeded the CPU-time limit of 2 s")
    if not result.report.cpu_limit.startswith("enforced"):
        return  # per process only: each of them got its own 2 s
    assert result.report.cpu_s is not None and result.report.cpu_s < 3, "2 s for all of them together"


@needs_bwrap
def test_a_sleeping_command_and_its_detached_daemon_are_stopped_by_the_wall_limit(tmp_path: Path, marker: str) -> None:
    copy = workspace(
        tmp_path,
        """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[1]], start_new_session=True)
        time.sleep(600)
        """,
    )
    result = run(copy, marker, SandboxPolicy(limits=LIMITS.model_copy(update={"wall_s": 2})))
    assert_contained(result, marker, "exceeded the wall-time limit of 2 s")


def test_the_runner_raises_command_timed_out_at_the_wall_limit(tmp_path: Path, marker: str) -> None:
    copy = workspace(tmp_path, "import time\ntime.sleep(600)\n")
    with pytest.raises(CommandTimedOut) as raised:
        run_command(["python", "run.py", marker], cwd=copy, timeout_s=1)
    assert raised.value.timeout_s == 1
    assert raised.value.sandbox is not None and raised.value.sandbox.limit_exceeded == "wall_time"
    assert leftovers(marker) == []


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


# scheduling: below ModelGuard's services

PRIORITY_PROBE = """
import os
print("NICE", os.getpriority(os.PRIO_PROCESS, 0), flush=True)
group = open("/proc/self/autogroup").read().split() if os.path.exists("/proc/self/autogroup") else []
if group:  # empty where the session has no group of its own (it never left init's, as on a CI runner)
    print("AUTOGROUP", group[-1], flush=True)
try:
    os.setpriority(os.PRIO_PROCESS, 0, 0)
    print("RAISED", os.getpriority(os.PRIO_PROCESS, 0), flush=True)
except PermissionError:
    print("REFUSED", flush=True)
"""


@pytest.mark.parametrize("nice", [3, 10])
def test_a_command_runs_below_modelguards_own_priority(tmp_path: Path, marker: str, nice: int) -> None:
    own, own_group = os.getpriority(os.PRIO_PROCESS, 0), own_autogroup_nice()
    copy = workspace(tmp_path, PRIORITY_PROBE)
    limits = LIMITS.model_copy(update={"nice": nice})
    for policy in (SandboxPolicy(limits=limits), SandboxPolicy(limits=limits, isolation="none", allow_unconfined=True)):
        if policy.isolation != "none" and ISOLATION.mechanism != "bwrap":
            continue
        result = run(copy, marker, policy)
        assert not result.failed, result.failure_reason
        assert f"NICE {min(19, own + nice)}" in result.stdout, result.stdout
        if own_group is not None:  # the kernel shares the CPU between sessions first, then by niceness inside one
            assert f"AUTOGROUP {min(19, own_group + nice)}" in result.stdout, result.stdout
    assert os.getpriority(os.PRIO_PROCESS, 0) == own, "ModelGuard's own priority is unchanged"
    assert own_autogroup_nice() == own_group, "ModelGuard's own session group is unchanged"


def own_autogroup_nice() -> int | None:
    """This process's session group's niceness, where the kernel schedules by session (``sched(7)``, autogroup)."""
    enabled = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if not enabled.exists() or enabled.read_text().strip() != "1":
        return None
    if not Path("/proc/self/autogroup").read_text().strip():
        # a session with no group of its own (a CI runner's): the command's group is set below the root group all
        # the same, but that is checked where this process has a group (unit-tested in test_sandbox_process.py)
        return None
    return session_group_nice()


@needs_bwrap
def test_a_confined_command_cannot_raise_its_priority_back(tmp_path: Path, marker: str) -> None:
    result = run(workspace(tmp_path, PRIORITY_PROBE), marker)
    assert not result.failed, result.failure_reason
    assert "REFUSED" in result.stdout and "RAISED" not in result.stdout, result.stdout


TERMINAL_PROBE = """
import os
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("TERMINAL REACHED", flush=True)
except OSError as exc:
    print("NO TERMINAL", exc.errno, flush=True)
"""

FROM_A_TERMINAL = """
import json, os, sys
from pathlib import Path
from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.run import run_sandboxed
os.close(os.open("/dev/tty", os.O_RDWR))  # precondition: this process has a controlling terminal
limits, isolation, copy, out = sys.argv[1:5]
policy = SandboxPolicy.model_validate({"limits": json.loads(limits), "isolation": isolation, "allow_unconfined": True})
result = run_sandboxed(["python", "run.py"], Path(copy), policy)
Path(out).write_text(json.dumps({"stdout": result.stdout, "failure": result.failure_reason}))
"""


@pytest.mark.parametrize("isolation", ["bwrap", "none"])
def test_a_command_cannot_reach_the_terminal_modelguard_runs_in(tmp_path: Path, isolation: str) -> None:
    """Each command is its own session without a controlling terminal, so it cannot type into ModelGuard's (the
    TIOCSTI attack): ModelGuard here runs with a pseudo-terminal as its controlling terminal."""
    if isolation == "bwrap" and ISOLATION.mechanism != "bwrap":
        pytest.skip(f"bubblewrap unavailable: {ISOLATION.reason}")
    copy, out = workspace(tmp_path, TERMINAL_PROBE), tmp_path / "out.json"
    leader, follower = os.openpty()
    try:
        modelguard = subprocess.run(
            [sys.executable, "-c", FROM_A_TERMINAL, LIMITS.model_dump_json(), isolation, str(copy), str(out)],
            stdin=follower,
            stdout=follower,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
            cwd=Path(__file__).resolve().parents[2],
            timeout=60,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert modelguard.returncode == 0, modelguard.stderr.decode()
    outcome = json.loads(out.read_text())
    assert outcome["failure"] is None and f"NO TERMINAL {errno.ENXIO}" in outcome["stdout"], outcome


# processes without a cgroup: the unprivileged uid's RLIMIT_NPROC

FORKER = """
import os, sys, time
started = 0
for _ in range(500):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    started += 1
print("STARTED", started, flush=True)
os._exit(0)
"""


def unused_uid() -> int:
    """A uid no account and no process uses, so that its RLIMIT_NPROC count starts at zero."""
    taken = {entry.pw_uid for entry in pwd.getpwall()}
    running = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                running.add(entry.stat().st_uid)
            except OSError:
                continue
    return next(uid for uid in range(61000, 65000) if uid not in taken | running)


def no_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slots made from here on get no cgroup (as on a machine without one); none made before is taken, and none
    made during the test outlives it."""
    monkeypatch.setattr(spare_slots, "SPARES", 0)
    close_spares()
    monkeypatch.setattr(command_slot, "create_command_cgroup", lambda *_: CommandCgroup({}, {}, {"pids": "test"}))


@needs_bwrap
@pytest.mark.skipif(os.getuid() != 0, reason="ModelGuard as root is the case where RLIMIT_NPROC needs another uid")
def test_without_a_cgroup_a_fork_storm_is_bounded_by_the_unprivileged_uids_process_limit(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_cgroups(monkeypatch)
    uid = unused_uid()
    policy = SandboxPolicy(limits=LIMITS, run_as_uid=uid, run_as_gid=uid)
    result = run(workspace(tmp_path, FORKER), marker, policy)
    started = int(result.stdout.split()[1])
    assert started < LIMITS.max_processes, "the parent counts too: fewer children than the limit"
    assert result.report.process_limit.startswith(f"enforced (RLIMIT_NPROC of uid {uid}")
    assert result.report.identity.startswith(f"uid {uid}")
    assert result.report.memory_limit.startswith("per process only")
    deadline = time.monotonic() + 10
    while leftovers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(marker) == []


def test_unconfined_as_root_without_a_cgroup_the_report_says_processes_are_not_limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_cgroups(monkeypatch)
    result = run_sandboxed(["python", "-c", "pass"], tmp_path, UNCONFINED)
    if os.getuid() == 0:
        assert result.report.process_limit.startswith("not enforced (test; the kernel exempts uid 0")
    else:
        assert result.report.process_limit.startswith("enforced (RLIMIT_NPROC")


# inputs and outputs a different uid could not reach in place


@needs_bwrap
def test_an_input_only_root_could_read_is_readable_and_the_original_untouched(tmp_path: Path, marker: str) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    data = private / "eval.csv"
    data.write_text("a,b\n1,2\n")
    data.chmod(0o600)
    copy = workspace(tmp_path, "import sys\nprint(open(sys.argv[2]).read(), end='')\n")
    result = run(copy, marker, None, str(data))
    assert result.stdout == "a,b\n1,2\n" and not result.failed, result.failure_reason
    assert oct(data.stat().st_mode & 0o777) == "0o600" and data.stat().st_uid == os.getuid()


# nothing left behind


def _command_cgroups() -> list[Path]:
    hierarchies, _ = find_hierarchies()
    folders = {hierarchy.own_folder() for hierarchy in hierarchies.values()}
    return [entry for folder in folders for entry in folder.glob(f"{PREFIX}{os.getpid()}-*")]


def test_the_commands_cgroups_and_scratch_folder_are_gone_afterwards(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spare_slots, "SPARES", 0)  # no slot made ahead: every cgroup left would be the command's
    close_spares()
    copy = workspace(tmp_path, "import os\nprint(os.environ['HOME'])\n")
    result = run(copy, marker)
    assert not result.failed, result.failure_reason
    assert wait_until(lambda: not Path(result.stdout.strip()).exists(), 30)  # removed off the command's path
    assert _command_cgroups() == []


def test_this_process_is_fine_afterwards(tmp_path: Path) -> None:
    assert os.getcwd() and shutil.disk_usage(tmp_path).free > 0
    result = run_sandboxed(["python", "-c", "print('still here')"], tmp_path, SandboxPolicy(limits=LIMITS))
    assert result.stdout == "still here\n" and not result.failed


def test_an_isolation_object_for_none_needs_the_policy_to_allow_it(tmp_path: Path) -> None:
    none = Isolation("none", None, "test")
    with pytest.raises(SandboxUnavailable):
        run_sandboxed(["python", "-c", "pass"], tmp_path, SandboxPolicy(limits=LIMITS), isolation=none)
    allowed = run_sandboxed(["python", "-c", "pass"], tmp_path, UNCONFINED, isolation=none)
    assert allowed.report.network_isolation == "unavailable (test)"


# bubblewrap in a user namespace (how it runs when ModelGuard is not root: a laptop, the image's uid 10001)

USER_NAMESPACE_PROBE = """
import json, os, socket, sys
seen = {"uid": os.getuid(), "root": sorted(os.listdir("/"))}
try:
    seen["shadow"] = open("/etc/shadow").read()
except OSError as error:
    seen["shadow"] = error.strerror
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5)
    seen["connected"] = True
except OSError:
    seen["connected"] = False
print(json.dumps(seen))
"""


@needs_bwrap
def test_in_a_user_namespace_the_same_view_and_network_hold(tmp_path: Path, marker: str) -> None:
    in_user_namespace = Isolation("bwrap", ISOLATION.program, "", drop_from_root=False)
    copy = workspace(tmp_path, USER_NAMESPACE_PROBE)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = str(listener.getsockname()[1])
        policy = SandboxPolicy(limits=LIMITS)
        result = run_sandboxed(["python", "run.py", marker, port], copy, policy, isolation=in_user_namespace)
    assert not result.failed, result.stderr
    seen = json.loads(result.stdout)
    assert seen["uid"] == os.getuid() and seen["connected"] is False
    assert seen["shadow"] in ("", "Permission denied"), "covered even for a uid that could read it outside"
    system = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr", "var"}
    interpreter = {Path(path).resolve().parts[1] for path in (sys.prefix, sys.base_prefix)}
    assert set(seen["root"]) <= system | interpreter, "only the system, the interpreter and the empty /tmp"
    assert result.report.identity.endswith("in a user namespace without capabilities")


@needs_bwrap
def test_a_tree_and_temporary_folder_under_dev_shm_are_shown_over_the_sandbox_s_own_dev(
    tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TMPDIR=/dev/shm`` puts the command's staging there and a tree may be copied there: both must be visible in
    the sandbox's own ``/dev`` (before, bubblewrap could not even change into them), and nothing else of the
    machine's ``/dev/shm`` is."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        pytest.skip("no writable /dev/shm here")
    with tempfile.TemporaryDirectory(dir=shm) as folder:
        root = Path(folder)
        monkeypatch.setattr(tempfile, "tempdir", str(root))
        (root / "machine-secret").write_text("not for the command")
        copy = workspace(
            root,
            """
            import os, sys
            print(os.getcwd(), os.path.exists(os.path.join(os.path.dirname(os.getcwd()), "machine-secret")))
            print(sorted(os.listdir("/dev/shm")) == [os.path.basename(os.path.dirname(os.getcwd()))])
            open(sys.argv[2], "w").write("written")
        """,
        )
        out = root / "out" / "written.txt"
        out.parent.mkdir()
        result = run(copy, marker, None, str(out))
        assert not result.failed, (result.failure_reason, result.stderr)
        assert result.stdout.split() == [str(copy), "False", "True"]
        assert out.read_text() == "written"
