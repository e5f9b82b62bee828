"""Load a scenario bundle (``scenario.yaml``) and its policy (``policy.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

SCENARIO_FILE = "scenario.yaml"


class ScenarioError(ValueError):
    """The scenario bundle or policy file is missing, malformed or points outside its folder."""


@dataclass(frozen=True)
class CommitAuthor:
    name: str
    email: str


@dataclass(frozen=True)
class CommitSpec:
    """One commit of the scenario repository: the first has a ``tree``, later ones a ``patch``."""

    name: str
    message: str
    author: CommitAuthor
    date: datetime
    tree: Path | None = None
    patch: Path | None = None


@dataclass(frozen=True)
class DataSpec:
    generator: Path
    rows: int
    seed: int
    file_name: str
    dataset_urn: str | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    root: Path
    model_urn: str
    repository: str
    commits: tuple[CommitSpec, ...]
    data: DataSpec
    datahub_metadata: Path
    policy_path: Path

    def commit(self, name: str) -> CommitSpec:
        for spec in self.commits:
            if spec.name == name:
                return spec
        raise KeyError(f"scenario {self.name!r} has no commit named {name!r}")


def _require(mapping: dict[str, Any], key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping or mapping[key] in (None, ""):
        raise ScenarioError(f"{where}: missing required key {key!r}")
    return mapping[key]


def _inside(root: Path, relative: str, where: str) -> Path:
    resolved = (root / relative).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise ScenarioError(f"{where}: path {relative!r} leaves the scenario folder")
    if not resolved.exists():
        raise ScenarioError(f"{where}: path {relative!r} does not exist")
    return resolved


def _parse_date(value: Any, where: str) -> datetime:
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as error:
        raise ScenarioError(f"{where}: date {text!r} is not ISO 8601") from error
    if parsed.tzinfo is None:
        raise ScenarioError(f"{where}: date {text!r} needs an explicit UTC offset")
    return parsed


def _parse_commit(root: Path, raw: dict[str, Any], index: int) -> CommitSpec:
    name = str(_require(raw, "name", f"commits[{index}]"))
    where = f"commit {name!r}"
    author = _require(raw, "author", where)
    has_tree, has_patch = "tree" in raw, "patch" in raw
    if index == 0 and not (has_tree and not has_patch):
        raise ScenarioError(f"{where}: the first commit must give a tree and no patch")
    if index > 0 and not (has_patch and not has_tree):
        raise ScenarioError(f"{where}: every later commit must give a patch and no tree")
    return CommitSpec(
        name=name,
        message=str(_require(raw, "message", where)),
        author=CommitAuthor(
            name=str(_require(author, "name", f"{where} author")),
            email=str(_require(author, "email", f"{where} author")),
        ),
        date=_parse_date(_require(raw, "date", where), where),
        tree=_inside(root, raw["tree"], where) if has_tree else None,
        patch=_inside(root, raw["patch"], where) if has_patch else None,
    )


def load_scenario(directory: Path) -> Scenario:
    root = Path(directory).resolve()
    path = root / SCENARIO_FILE
    if not path.is_file():
        raise ScenarioError(f"{path} not found")
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: expected a mapping at the top level")
    raw_commits = _require(raw, "commits", str(path))
    if not isinstance(raw_commits, list):
        raise ScenarioError(f"{path}: commits must be a list")
    commits = tuple(_parse_commit(root, entry, index) for index, entry in enumerate(raw_commits))
    names = [commit.name for commit in commits]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{path}: commit names must be unique, got {names}")
    data = _require(raw, "data", str(path))
    file_name = str(_require(data, "file", "data"))
    if Path(file_name).name != file_name or file_name in (".", ".."):
        raise ScenarioError(f"data: file {file_name!r} must be a plain file name")
    return Scenario(
        name=str(_require(raw, "name", str(path))),
        root=root,
        model_urn=str(_require(raw, "model_urn", str(path))),
        repository=str(_require(raw, "repository", str(path))),
        commits=commits,
        data=DataSpec(
            generator=_inside(root, _require(data, "generator", "data"), "data"),
            rows=int(_require(data, "rows", "data")),
            seed=int(_require(data, "seed", "data")),
            file_name=file_name,
            dataset_urn=data.get("dataset_urn"),
        ),
        datahub_metadata=_inside(root, _require(raw, "datahub", str(path)), "datahub"),
        policy_path=_inside(root, _require(raw, "policy", str(path)), "policy"),
    )


def load_policy(path: Path) -> dict[str, Any]:
    """Read a policy file; it must at least hold a ``gate`` and a ``workspace`` section."""
    policy_path = Path(path)
    if not policy_path.is_file():
        raise ScenarioError(f"{policy_path} not found")
    raw = yaml.safe_load(policy_path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ScenarioError(f"{policy_path}: expected a mapping at the top level")
    for section in ("gate", "workspace"):
        if not isinstance(raw.get(section), dict):
            raise ScenarioError(f"{policy_path}: missing section {section!r}")
    return raw
