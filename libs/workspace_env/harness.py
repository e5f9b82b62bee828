"""What ModelGuard adds to a workspace's environment: the test runner, pytest, at the version ModelGuard itself runs
with, when the declaration does not name it. The validator's ``tests`` step runs the workspace's ``tests`` command
(``python -m pytest ... --junitxml``) and reads its JUnit report, and a repository's declaration usually lists what
its model needs at run time, its test tools elsewhere (``requirements-dev.txt``). Nothing else is added: ModelGuard's
own code that runs in the sandbox (the validator's compile check) needs only the standard library."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata

from libs.workspace_env.requirement_lines import normalised

TEST_RUNNER = "pytest"


def harness_requirements(declared_names: Iterable[str]) -> tuple[str, ...]:
    """``pytest==<ModelGuard's version>`` unless ``declared_names`` has it or ModelGuard has no pytest installed."""
    if TEST_RUNNER in {normalised(name) for name in declared_names}:
        return ()
    try:
        return (f"{TEST_RUNNER}=={metadata.version(TEST_RUNNER)}",)
    except metadata.PackageNotFoundError:
        return ()
