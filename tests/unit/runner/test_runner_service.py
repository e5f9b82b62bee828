"""The workspace runner's own pieces: it loads no Kafka client, key, ledger or artifact store and no other service;
it lays a request out without writing through a link; it answers in the caller's terms."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from libs.policy.sandbox import SandboxLimits
from libs.sandbox.report import SandboxReport
from modelguard.stack import REPO_ROOT
from services.runner.answer import in_caller_terms
from services.runner.layout import LayoutRefused, make_folders, mirror

FORBIDDEN = ("faststream", "aiokafka", "kafka", "libs.signing", "libs.ledger", "libs.artifacts", "libs.bus.runtime")


def test_the_runner_loads_no_kafka_client_key_ledger_artifact_store_or_other_service() -> None:
    program = "import json, sys, services.runner.main; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout)
    loaded = [name for name in modules if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]
    assert loaded == []
    services = {name.split(".")[1] for name in modules if name.startswith("services.")}
    assert services == {"runner"}


def test_the_layout_never_goes_through_a_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "a" / "link").symlink_to(tmp_path)
    with pytest.raises(LayoutRefused, match="in the way"):
        make_folders(root, root / "a" / "link" / "escape")
    assert not (tmp_path / "escape").exists()
    (root / "a" / "file").write_text("")
    with pytest.raises(LayoutRefused):
        make_folders(root, root / "a" / "file" / "below")
    assert mirror(root, "/work/revision") == root / "work" / "revision"


def test_the_answer_takes_the_runners_folder_out_of_every_path() -> None:
    root = Path("/tmp/modelguard-runner-x/root")
    report = SandboxReport(
        mechanism="bwrap",
        network_isolation="enforced",
        filesystem_isolation="enforced",
        process_limit="enforced",
        limits=SandboxLimits(),
        limit_exceeded=None,
        ending="exit 0",
        cpu_s=0.1,
        max_rss_bytes=1,
        inputs=(f"{root}/data/train.csv",),
        refused_outputs=(f"{root}/work/revision: the working directory is read-only",),
        outputs_written=(f"{root}/out/p.csv",),
        hidden=("/etc/shadow",),
    )
    seen = in_caller_terms(report, root)
    assert seen.inputs == ("/data/train.csv",) and seen.outputs_written == ("/out/p.csv",)
    assert seen.refused_outputs == ("/work/revision: the working directory is read-only",)
    assert seen.hidden == ("/etc/shadow",) and seen.limits == report.limits
