"""Settings are read once (issue 17): no module of libs/, services/ or modelguard/ reads the process environment
except those listed here, each with its reason. A new ``os.environ`` / ``os.getenv`` read elsewhere fails this
test: make it a field of ``libs/settings.py``'s Settings (or a section of it), or, for a secret, a read from the
secrets mapping a composition root hands in, or add it here with the reason it cannot be either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCANNED = ("libs", "services", "modelguard")
READS = frozenset({"environ", "environb", "getenv", "getenvb"})

ALLOWED: dict[str, str] = {
    "libs/settings.py": "the loader: Settings and its sections, parsed once at a process's start",
    "libs/policy/central.py": (
        "where the central policy's file is (MODELGUARD_CENTRAL_POLICY), read where a section is loaded: the sandbox "
        "limits, the image policy and the delivery policy are read with no Settings handed to them"
    ),
    "libs/sandbox/job/settings.py": (
        "the Job backend's own loader, read where a command names its image (libs/workspace/runner.py), which has "
        "no Settings handed to it: a misconfigured backend fails that command (environment_failed), not the "
        "service's start"
    ),
    "libs/sandbox/job/launcher.py": "PATH passed through to the Job's launcher process",
    "libs/sandbox/protected_paths.py": (
        "the environment's secret files (AWS_*_FILE, …_KEY_FILE) found to hide them from sandboxed commands"
    ),
    "libs/workspace/git.py": "PATH passed through to git",
    "libs/workspace_env/uv_process.py": "PATH, HOME and uv's proxy and certificate variables passed through to uv",
    "libs/artifacts/open_store.py": "secrets mapping: the object store's credentials (AWS_*), for the S3 client",
    "services/context/bootstrap.py": "secrets mapping: DATAHUB_GMS_TOKEN and the schema registry's credentials",
    "services/detector/main.py": "secrets mapping: the ingestion endpoint's bearer token (MODELGUARD_INGEST_TOKEN)",
    "services/publisher/publication_channels.py": "secrets mapping: GitHub, DataHub, Slack and webhook credentials",
    "services/runner/job_pod/__main__.py": "the Job pod's roles read their own input environment (set by the Job)",
    "modelguard/cli.py": (
        "the operator's CLI: whether an external broker is configured (MODELGUARD_KAFKA_BOOTSTRAP), replica "
        "counts, the schema registry's credentials"
    ),
    "modelguard/console/command.py": "the console's token and trusted header (secrets) and its addresses",
    "modelguard/live_verify.py": "a live check against an operator's DataHub: its address and token",
    "modelguard/stack.py": "passes the environment through to the stack's service processes, which read it",
    "modelguard/supervisor.py": "passes the environment through to the processes it restarts",
    "modelguard/demo.py": "sets MODELGUARD_HOME for the demo stack's processes and reads the broker address",
    "modelguard/demo_home.py": "whether the operator chose the demo's home (MODELGUARD_HOME)",
    "modelguard/bench.py": "a benchmark: the stack's home and broker for its processes, an optional PostgreSQL",
    "modelguard/bench_diagnosis.py": "a benchmark: the environment of the investigate processes it starts",
    "modelguard/bench_replicas.py": "a benchmark: the broker address for the stack it starts",
}


def environment_reads(source: str) -> list[int]:
    """The lines of ``source`` that read the process environment: ``os.environ``, ``os.getenv`` (and their bytes
    forms) under any name ``os`` is imported as, and ``from os import environ`` / ``getenv``."""
    tree = ast.parse(source)
    os_names: set[str] = {"os"} | {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "os" and alias.asname
    }
    return sorted(
        {node.lineno for node in ast.walk(tree) if isinstance(node, ast.expr | ast.stmt) and _reads(node, os_names)}
    )


def _reads(node: ast.AST, os_names: set[str]) -> bool:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id in os_names and node.attr in READS
    if isinstance(node, ast.ImportFrom) and node.module == "os":
        return any(alias.name in READS for alias in node.names)
    return False


def _reading_files() -> dict[str, list[int]]:
    found = {}
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*.py")):
            if lines := environment_reads(path.read_text(encoding="utf-8")):
                found[path.relative_to(REPO).as_posix()] = lines
    return found


def test_only_the_listed_files_read_the_environment() -> None:
    unlisted = {path: lines for path, lines in _reading_files().items() if path not in ALLOWED}
    assert not unlisted, (
        f"the environment is read outside libs/settings.py at {unlisted}: make it a Settings field, a read from a "
        "secrets mapping handed in, or list the file in ALLOWED with its reason"
    )


def test_every_listed_file_still_reads_it() -> None:
    assert sorted(set(ALLOWED) - set(_reading_files())) == []


@pytest.mark.parametrize(
    "source",
    [
        "import os\nport = os.environ.get('MODELGUARD_INGEST_PORT')\n",
        "import os\nlevel = os.getenv('MODELGUARD_LOG_LEVEL')\n",
        "import os as system\nhost = system.environ['MODELGUARD_HEALTH_HOST']\n",
        "from os import environ\n",
        "from os import getenv as read\n",
        "import os\nsecrets = dict(os.environ)\n",
    ],
)
def test_each_way_of_reading_it_is_found(source: str) -> None:
    assert environment_reads(source)


@pytest.mark.parametrize(
    "source",
    [
        "REFUSED = 'os.environ os.getenv'\n",  # the patch guard names them as data
        "def f(environ):\n    return environ.get('X')\n",  # a mapping handed in
        "import os\npath = os.path.join('a', 'b')\n",
    ],
)
def test_naming_it_or_reading_a_mapping_handed_in_is_not_a_read(source: str) -> None:
    assert environment_reads(source) == []
