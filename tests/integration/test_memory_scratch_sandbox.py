"""A workspace laid out in the stack's memory scratch (``modelguard/memory_scratch.py``) runs in bubblewrap as one
under the home does: its command reads its tree and writes its declared output there, and sees nothing else of the
scratch (another incident's workspace beside it) nor of the machine's memory filesystem: bubblewrap gives it a
``/dev`` of its own, where only the folders leading to its tree and output are made."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from libs.policy.sandbox import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox.copy import copy_workspace
from libs.sandbox.isolation import probe_isolation
from libs.sandbox.run import run_sandboxed
from modelguard.memory_scratch import MEMORY_PARENT, memory_scratch, remove_memory_scratch

ISOLATION = probe_isolation("auto")
LIMITS = SandboxLimits(
    cpu_s=10, memory_bytes=512 * MIB, wall_s=30, output_bytes=1 * MIB, file_size_bytes=1 * MIB, max_processes=64
)
pytestmark = pytest.mark.skipif(ISOLATION.mechanism != "bwrap", reason=f"bubblewrap unavailable: {ISOLATION.reason}")

LOOK_AROUND = """
import json, os, sys
out = sys.argv[sys.argv.index("--output") + 1]
scratch = os.path.dirname(os.path.dirname(os.path.dirname(os.getcwd())))
seen = {
    "own_file": open("model.txt").read(),
    "neighbour": os.path.exists(os.path.join(scratch, "diagnoser", "workspace-b", "base", "secret.txt")),
    "memory_filesystem": sorted(os.listdir("/dev/shm")),
    "scratch": sorted(os.listdir(scratch)),
}
with open(out, "w") as handle:
    json.dump(seen, handle)
"""


def test_a_command_in_the_memory_scratch_sees_its_own_tree_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    scratch = memory_scratch(home)
    if scratch is None:
        pytest.skip(f"no memory filesystem with room at {MEMORY_PARENT} here")
    try:
        source = tmp_path / "source"
        source.mkdir()
        (source / "run.py").write_text(textwrap.dedent(LOOK_AROUND), encoding="utf-8")
        (source / "model.txt").write_text("weights", encoding="utf-8")
        tree = copy_workspace(source, scratch / "validator" / "workspace-a" / "candidate")
        neighbour = scratch / "diagnoser" / "workspace-b" / "base"
        neighbour.mkdir(parents=True)
        (neighbour / "secret.txt").write_text("another incident's", encoding="utf-8")
        out = scratch / "validator" / "workspace-a" / "out" / "seen.json"
        out.parent.mkdir()
        result = run_sandboxed(
            ["python", "run.py", "--output", str(out)],
            tree,
            SandboxPolicy(limits=LIMITS),
        )
        assert result.returncode == 0, result.stderr
        seen = json.loads(out.read_text())
        assert seen["own_file"] == "weights"
        assert seen["neighbour"] is False
        # a /dev of its own, holding only the way to the command's own tree and output: nothing else of the machine's
        # memory filesystem, nor of the scratch
        assert seen["memory_filesystem"] == [scratch.name]
        assert seen["scratch"] == ["validator"]
        assert not (result.report.workspace_changes.created or result.report.workspace_changes.modified)
    finally:
        remove_memory_scratch(home)
