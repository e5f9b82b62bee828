"""Build a bundle's model repository as a real git repository with deterministic commit SHAs.

The first commit is the bundle's base tree, the second its candidate tree (files the candidate lacks are
deleted). Author, committer, message and dates come from ``bundle.yaml`` (or fixed defaults) and git runs
with an isolated configuration, so the same bundle gives the same SHAs on every machine.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from libs.bundle.load import Bundle
from libs.bundle.spec import CommitMeta
from libs.workspace.git import GitCommandFailed, git_dir_of, run_git

BRANCH = "main"
SKIPPED_NAMES = frozenset({".git", "__pycache__", ".pytest_cache", ".ruff_cache"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")


class RepositoryMismatch(RuntimeError):
    """``dest`` already holds a repository whose history differs from the bundle's commits."""


@dataclass(frozen=True)
class BuiltRepository:
    path: Path
    commits: dict[str, str]

    @property
    def head(self) -> str:
        return list(self.commits.values())[-1]


def git_date(moment: datetime) -> str:
    """Git's internal date format, ``<unix seconds> <+hhmm>``, which every git version reads alike."""
    offset = moment.utcoffset()
    if offset is None:
        raise ValueError(f"{moment!r} has no UTC offset")
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"{int(moment.timestamp())} {sign}{hours:02d}{rest:02d}"


def copy_base_tree(source: Path, dest: Path) -> None:
    """Copy regular files only, with a fixed mode, so the committed tree does not depend on the
    checkout's permissions; refuse links, which could point anywhere."""
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part in SKIPPED_NAMES for part in relative.parts) or path.name.endswith(SKIPPED_SUFFIXES):
            continue
        if path.is_symlink():
            raise ValueError(f"base tree may not contain links: {relative}")
        target = dest / relative
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
            target.chmod(0o644)


def commit_all(repo: Path, spec: CommitMeta) -> str:
    date = git_date(spec.date)
    identity = {
        "GIT_AUTHOR_NAME": spec.author.name,
        "GIT_AUTHOR_EMAIL": spec.author.email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": spec.author.name,
        "GIT_COMMITTER_EMAIL": spec.author.email,
        "GIT_COMMITTER_DATE": date,
    }
    run_git(["add", "--all"], repo)
    run_git(
        [
            "-c",
            f"user.name={spec.author.name}",
            "-c",
            f"user.email={spec.author.email}",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty",
            "--file=-",
        ],
        repo,
        extra_env=identity,
        stdin=spec.message.encode("utf-8"),
    )
    return run_git(["rev-parse", "HEAD"], repo).decode("ascii").strip()


def clear_work_tree(repo: Path) -> None:
    for path in sorted(repo.iterdir()):
        if path.name == ".git":
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _build(bundle: Bundle, repo: Path) -> dict[str, str]:
    repo.mkdir(parents=True, exist_ok=True)
    run_git(["init", "--quiet", f"--initial-branch={BRANCH}"], repo)
    run_git(["config", "core.autocrlf", "false"], repo)
    shas: dict[str, str] = {}
    for name, meta in (("base", bundle.spec.commits.base), ("candidate", bundle.spec.commits.candidate)):
        clear_work_tree(repo)
        copy_base_tree(bundle.tree(name), repo)
        shas[name] = commit_all(repo, meta)
    return shas


def existing_history(repo: Path) -> list[str]:
    try:
        git_dir = git_dir_of(repo)
        output = run_git([f"--git-dir={git_dir}", "rev-list", "--reverse", f"refs/heads/{BRANCH}"], repo)
    except (FileNotFoundError, GitCommandFailed):
        return []
    return output.decode("ascii").split()


def build_repository(bundle: Bundle, dest: Path) -> BuiltRepository:
    """Create the bundle's repository at ``dest``; if ``dest`` already holds exactly these commits,
    leave it as it is. Raise RepositoryMismatch when ``dest`` holds something else."""
    dest = Path(dest).resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=dest.parent) as staging:
        staged = Path(staging) / "repo"
        shas = _build(bundle, staged)
        if dest.exists() and any(dest.iterdir()):
            if existing_history(dest) != list(shas.values()):
                raise RepositoryMismatch(f"{dest} exists and does not hold the commits of {bundle.name}")
            return BuiltRepository(path=dest, commits=shas)
        if dest.exists():
            dest.rmdir()
        shutil.move(str(staged), str(dest))
    return BuiltRepository(path=dest, commits=shas)
