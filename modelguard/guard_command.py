"""``modelguard guard PATCH_FILE --workspace DIR``: check any patch against the patch-guard policy.

Teams run it in their own CI on the patches they are asked to merge. Exit codes: 0 accepted, 3 refused,
1 when an input cannot be read (one line on stderr). The policy is the central policy (``--policy FILE``,
else ``$MODELGUARD_CENTRAL_POLICY``, else ModelGuard's ``policy/central.yaml``) narrowed by the workspace's
config: ``--config FILE`` (a bundle.yaml or a model policy), else the ``bundle.yaml`` of the bundle the
workspace sits in (``DIR/../bundle.yaml``, or ``DIR/../../bundle.yaml`` for ``BUNDLE/workspace/candidate``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import GuardPolicyError, load_central_policy, narrowed_policy
from libs.patch_guard.report import GuardReport, human_lines
from libs.patch_guard.workspace_config import WorkspaceConfigError, WorkspaceRepairConfig, load_workspace_config
from libs.policy.central import central_policy_path
from modelguard import exit_codes

EXIT_ACCEPTED = exit_codes.OK
EXIT_UNREADABLE = exit_codes.USAGE
"""An input that cannot be read is bad input, as for every other command."""
EXIT_REFUSED = exit_codes.REFUSED
BUNDLE_FILE = "bundle.yaml"


class GuardInputError(Exception):
    """An input of the command cannot be read."""


def add_guard_parser(sub: Any) -> None:
    """Register ``guard`` on the ``modelguard`` subparsers."""
    guard = sub.add_parser(
        "guard",
        help="check a patch against the patch-guard policy; exit 0 accepted, 3 refused, 2 an input that cannot be read "
        "(docs/patch-guard.md)",
        description="Check a patch against the patch-guard policy (docs/patch-guard.md): paths, protected files, "
        "sizes, forbidden constructs on the AST. Exit 0 accepted, 3 refused, 2 an input that cannot be read.",
    )
    guard.add_argument("patch_file", metavar="PATCH_FILE", help="a unified diff ('-' for standard input)")
    guard.add_argument("--workspace", required=True, metavar="DIR", help="the model repository the patch is for")
    guard.add_argument("--json", action="store_true", help="print the report as JSON")
    guard.add_argument("--policy", metavar="FILE", help="the central policy (default: ModelGuard's)")
    guard.add_argument("--config", metavar="FILE", help="the workspace's config: a bundle.yaml or a model policy")
    guard.set_defaults(run=run_guard)


def run_guard(args: argparse.Namespace) -> int:
    try:
        workspace = _workspace(Path(args.workspace))
        central_path = central_policy_path(Path(args.policy) if args.policy else None)
        central = load_central_policy(central_path)
        config_path = Path(args.config) if args.config else _bundle_config(workspace)
        narrowing = load_workspace_config(config_path) if config_path else WorkspaceRepairConfig()
        patch = _read_patch(args.patch_file, central.max_patch_bytes)
    except (GuardInputError, GuardPolicyError, WorkspaceConfigError) as error:
        print(f"modelguard guard: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    report = check_patch(GuardRequest(patch=patch, policy=narrowed_policy(central, narrowing), workspace=workspace))
    sources = {"patch": args.patch_file, "workspace": str(workspace), "central_policy": str(central_path)}
    sources["workspace_config"] = str(config_path) if config_path else None
    print(_json(report, sources) if args.json else "\n".join(_human(report, sources)))
    return EXIT_ACCEPTED if report.accepted else EXIT_REFUSED


def _workspace(path: Path) -> Path:
    if not path.is_dir():
        raise GuardInputError(f"{path} is not a directory (--workspace)")
    return path


def _bundle_config(workspace: Path) -> Path | None:
    resolved = workspace.resolve()
    for folder in (resolved.parent, resolved.parent.parent):
        if (folder / BUNDLE_FILE).is_file():
            return folder / BUNDLE_FILE
    return None


def _read_patch(name: str, limit: int) -> bytes:
    """At most one byte over the limit: enough for the guard to refuse an oversized patch."""
    if name == "-":
        return sys.stdin.buffer.read(limit + 1)
    path = Path(name)
    if not path.is_file():
        raise GuardInputError(f"{path} is not a file (PATCH_FILE)")
    try:
        with path.open("rb") as handle:
            return handle.read(limit + 1)
    except OSError as error:
        raise GuardInputError(f"cannot read {path}: {error.strerror or error}") from error


def _human(report: GuardReport, sources: dict[str, str | None]) -> list[str]:
    config = sources["workspace_config"] or "none (the central policy's paths)"
    header = f"patch {sources['patch']} for {sources['workspace']}; policy {sources['central_policy']}; config {config}"
    return [header, *human_lines(report)]


def _json(report: GuardReport, sources: dict[str, str | None]) -> str:
    document = {
        **sources,
        "decision": "accepted" if report.accepted else "refused",
        **report.model_dump(mode="json"),
    }
    return json.dumps(document, indent=2, sort_keys=True)
