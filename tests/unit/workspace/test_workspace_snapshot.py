from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from libs.workspace.git import run_git
from libs.workspace.snapshot import UnsafeSnapshot, extract_snapshot, snapshot_commit, tree_digests

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def f() -> int:\n    return 1\n")
    (root / "README.md").write_text("hello\n")
    run_git(["init", "--quiet", "--initial-branch=main"], root)
    run_git(["add", "--all"], root)
    run_git(["commit", "--quiet", "-m", "first"], root, extra_env=GIT_IDENTITY)
    return root, run_git(["rev-parse", "HEAD"], root).decode().strip()


def tar_with(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for info, content in members:
            if content is not None:
                info.size = len(content)
            archive.addfile(info, io.BytesIO(content) if content is not None else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


def test_snapshot_of_a_commit_is_byte_stable(repo: tuple[Path, str]) -> None:
    root, sha = repo
    (root / "README.md").write_text("uncommitted change\n")
    assert snapshot_commit(root, sha) == snapshot_commit(root, sha)
    assert snapshot_commit(root, "HEAD") == snapshot_commit(root, sha)


def test_snapshot_holds_the_committed_tree_not_the_work_tree(repo: tuple[Path, str], tmp_path: Path) -> None:
    root, sha = repo
    (root / "README.md").write_text("uncommitted change\n")
    extract_snapshot(snapshot_commit(root, sha), tmp_path / "out")
    digests = tree_digests(tmp_path / "out")
    assert digests == {
        "README.md": hashlib.sha256(b"hello\n").hexdigest(),
        "pkg/__init__.py": hashlib.sha256(b"").hexdigest(),
        "pkg/core.py": hashlib.sha256(b"def f() -> int:\n    return 1\n").hexdigest(),
    }


def test_snapshot_of_an_unknown_commit_fails(repo: tuple[Path, str]) -> None:
    root, _ = repo
    with pytest.raises(RuntimeError):
        snapshot_commit(root, "0" * 40)


def test_snapshot_needs_a_repository(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        snapshot_commit(tmp_path, "HEAD")


def test_extract_refuses_a_non_empty_destination(repo: tuple[Path, str], tmp_path: Path) -> None:
    root, sha = repo
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError):
        extract_snapshot(snapshot_commit(root, sha), tmp_path / "out")


@pytest.mark.parametrize(
    "members",
    [
        [(member("/etc/evil"), b"x")],
        [(member("../evil"), b"x")],
        [(member("ok/../../evil"), b"x")],
        [(member("link", tarfile.SYMTYPE, "/etc/passwd"), None)],
        [(member("link", tarfile.SYMTYPE, "../../outside"), None)],
        [(member("hard", tarfile.LNKTYPE, "/etc/passwd"), None)],
        [(member("fifo", tarfile.FIFOTYPE), None)],
    ],
    ids=["absolute", "parent", "nested-parent", "abs-symlink", "rel-symlink-out", "hardlink", "fifo"],
)
def test_extract_refuses_members_that_escape(
    members: list[tuple[tarfile.TarInfo, bytes | None]], tmp_path: Path
) -> None:
    with pytest.raises(UnsafeSnapshot):
        extract_snapshot(tar_with(*members), tmp_path / "out")
    assert not any((tmp_path / "out").iterdir()), "nothing is written when one member is unsafe"
    assert not (tmp_path / "evil").exists()


def test_extract_allows_links_that_stay_inside(tmp_path: Path) -> None:
    data = tar_with((member("pkg/a.py"), b"A = 1\n"), (member("pkg/b.py", tarfile.SYMTYPE, "a.py"), None))
    extract_snapshot(data, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "b.py").read_text() == "A = 1\n"


def test_tree_digests_skip_caches_and_notice_changes(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / ".pytest_cache" / "README.md").write_text("cache")
    before = tree_digests(tmp_path)
    assert list(before) == ["pkg/mod.py"]
    (tmp_path / "pkg" / "mod.py").write_text("x = 2\n")
    assert tree_digests(tmp_path) != before


@pytest.mark.parametrize("data", [b"row_id,label\n1,0\n", b"\x1f\x8b\x08\x00 gzip, not a plain tar", b""])
def test_bytes_that_are_not_a_tar_archive_are_an_unsafe_snapshot_with_the_reason(data: bytes, tmp_path: Path) -> None:
    with pytest.raises(UnsafeSnapshot, match="not an uncompressed tar archive"):
        extract_snapshot(data, tmp_path / "out")
