from __future__ import annotations

import hashlib
import io
import random
import stat
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from libs.workspace.git import run_git
from libs.workspace.snapshot import UnsafeSnapshot, _check_member, extract_snapshot, snapshot_commit, tree_digests

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


# the plain extraction (no links in the archive) against tarfile's own, with its "data" filter


def reference_extract(data: bytes, dest: Path) -> None:
    """What ``extract_snapshot`` did for every archive before it wrote plain ones itself."""
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        archive.extractall(dest, filter="data")


def tree_facts(root: Path) -> dict[str, tuple[object, ...]]:
    facts: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if path.is_file() else None
        facts[path.relative_to(root).as_posix()] = (
            stat.S_IFMT(info.st_mode),
            stat.S_IMODE(info.st_mode),
            info.st_uid,
            info.st_gid,
            int(info.st_mtime),
            content,
        )
    return facts


def file_member(name: str, mode: int = 0o644, mtime: int = 1_700_000_000, uid: int = 0) -> tarfile.TarInfo:
    info = member(name)
    info.mode, info.mtime, info.uid, info.gid = mode, mtime, uid, uid
    return info


def dir_member(name: str, mode: int = 0o755, mtime: int = 1_600_000_000) -> tarfile.TarInfo:
    info = member(name, tarfile.DIRTYPE)
    info.mode, info.mtime = mode, mtime
    return info


PLAIN_ARCHIVES: dict[str, list[tuple[tarfile.TarInfo, bytes | None]]] = {
    "files-without-folder-members": [(file_member("a/b/c/deep.py"), b"x = 1\n"), (file_member("top.txt"), b"")],
    "modes": [
        (dir_member("bin", 0o700), None),
        (file_member("bin/run.sh", 0o755), b"#!/bin/sh\n"),
        (file_member("bin/setuid", 0o4777), b"s"),
        (file_member("bin/private", 0o600), b"p"),
        (file_member("bin/group-exec-only", 0o610), b"g"),
        (file_member("bin/no-owner-bits", 0o044), b"n"),
        (dir_member("open", 0o777), None),
        (file_member("open/world-writable", 0o666), b"w"),
    ],
    "owners-and-times": [
        (file_member("old.py", mtime=0, uid=1234), b"old\n"),
        (file_member("new.py", mtime=2_000_000_000, uid=65534), b"new\n"),
        (dir_member("pkg", mtime=1), None),
        (file_member("pkg/__init__.py", mtime=5), b""),
    ],
    "long-and-unicode-names": [
        (file_member("d/" + "n" * 150 + ".py"), b"long\n"),
        (file_member("données/é模型.csv"), b"a,b\n1,2\n"),
        (file_member("./dot/prefixed.py"), b"dot\n"),
    ],
    "folder-after-its-files": [(file_member("late/x.py"), b"x\n"), (dir_member("late", 0o750, 42), None)],
    "the-destination-itself": [(dir_member("./", 0o700, 7), None), (file_member("./in.py"), b"in\n")],
    "binary-and-large": [(file_member("blob.bin"), bytes(range(256)) * 4096)],
}


@pytest.mark.parametrize("name", sorted(PLAIN_ARCHIVES))
def test_a_plain_archive_extracts_as_tarfile_extracts_it(name: str, tmp_path: Path) -> None:
    data = tar_with(*PLAIN_ARCHIVES[name])
    reference_extract(data, tmp_path / "reference")
    extract_snapshot(data, tmp_path / "ours")
    assert tree_facts(tmp_path / "ours") == tree_facts(tmp_path / "reference")


def test_a_git_archive_extracts_as_tarfile_extracts_it(repo: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = repo
    (root / "pkg" / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "pkg" / "tool.sh").chmod(0o755)
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "x.py").write_text("x = 1\n")
    run_git(["add", "--all"], root)
    run_git(["commit", "--quiet", "-m", "second"], root, extra_env=GIT_IDENTITY)
    data = snapshot_commit(root, "HEAD")
    reference_extract(data, tmp_path / "reference")
    extract_snapshot(data, tmp_path / "ours")
    assert tree_facts(tmp_path / "ours") == tree_facts(tmp_path / "reference")
    assert len(tree_facts(tmp_path / "ours")) == 8


@pytest.mark.parametrize(
    "members",
    [
        [(file_member("same.py"), b"first\n"), (file_member("same.py"), b"second\n")],
        [(file_member("pkg"), b"a file\n"), (file_member("pkg/mod.py"), b"x\n")],
        [(dir_member("pkg"), None), (file_member("pkg"), b"a file where a folder was\n")],
    ],
    ids=["duplicate-name", "file-then-folder", "folder-then-file"],
)
def test_an_archive_with_clashing_names_gets_tarfiles_own_answer(
    members: list[tuple[tarfile.TarInfo, bytes | None]], tmp_path: Path
) -> None:
    data = tar_with(*members)
    try:
        reference_extract(data, tmp_path / "reference")
    except OSError as expected:
        with pytest.raises(type(expected)):
            extract_snapshot(data, tmp_path / "ours")
    else:
        extract_snapshot(data, tmp_path / "ours")
        assert tree_facts(tmp_path / "ours") == tree_facts(tmp_path / "reference")


def _links(*pairs: tuple[str, str]) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return [(member(name, tarfile.SYMTYPE, target), None) for name, target in pairs]


_DEEP = "/".join(f"d{level}" for level in range(8))
"""Eight folders down: a link there to eight `..` leads to the root; eight more from it lead to the file system's."""
_FOLDERS = [(member(name, tarfile.DIRTYPE), None) for name in ("p", "p/q", *(_DEEP[: 3 * n - 1] for n in range(1, 9)))]


@pytest.mark.parametrize(
    "links",
    [
        [("e", "p/q/up/.."), ("p/q/up", "../..")],  # e written first: its text, read alone, stays inside
        [("p/q/up", "../.."), ("e", "p/q/up/..")],  # up written first: tarfile's own filter caught it, untidily
        [(f"{_DEEP}/up", "/".join([".."] * 8)), ("key", f"{_DEEP}/up/{'../' * 8}etc/passwd")],
        [("p/a", "b"), ("p/b", "a")],  # a loop: the kernel gives up on it (ELOOP)
    ],
    ids=["chain-link-first", "chain-target-first", "chain-to-an-absolute-file", "loop"],
)
def test_extract_refuses_links_that_lead_out_through_other_links(links: list[tuple[str, str]], tmp_path: Path) -> None:
    """A hostile pull request's tree: each link's own text stays inside the snapshot, and together they lead out of
    it (to the scratch folder of the service that extracts it, and from there anywhere: its keys)."""
    (tmp_path / "secret").write_text("the service's key")
    with pytest.raises(UnsafeSnapshot, match="link points out of the snapshot"):
        extract_snapshot(tar_with(*_FOLDERS, *_links(*links), (member("m.py"), b"x = 1\n")), tmp_path / "out")
    assert not any((tmp_path / "out").iterdir()), "nothing is written when one link leads out"


def test_extract_keeps_links_that_lead_inside_through_other_links(tmp_path: Path) -> None:
    data = tar_with(
        *_FOLDERS,
        (member("pkg/a.py"), b"A = 1\n"),
        *_links(("p/q/up", "../.."), ("lib", "pkg"), ("via", "p/q/up/lib/a.py"), ("p/q/here", "../../p/q/up/pkg")),
    )
    extract_snapshot(data, tmp_path / "out")
    assert (tmp_path / "out" / "via").read_text() == "A = 1\n"
    assert (tmp_path / "out" / "p" / "q" / "here" / "a.py").read_text() == "A = 1\n"


def _resolved_check(info: tarfile.TarInfo, dest: Path) -> bool:
    """Whether a member stays inside ``dest`` by ``Path.resolve`` on the disk (how the check was made before it
    read names alone): the oracle for ``_check_member`` on a fresh, empty destination."""
    name = PurePosixPath(info.name)
    if name.is_absolute() or info.name.startswith(("/", "\\")) or ".." in name.parts:
        return False
    target = (dest / name).resolve()
    if not target.is_relative_to(dest):
        return False
    if info.issym():
        link = PurePosixPath(info.linkname)
        return not link.is_absolute() and (target.parent / link).resolve().is_relative_to(dest)
    return True


def test_a_members_place_read_from_its_name_is_where_the_disk_would_resolve_it(tmp_path: Path) -> None:
    """Random names and link targets (parents, the current folder, empty parts, absolute, backslashes), on a fresh
    destination as extraction has it: a member is refused exactly when resolving its place, and its link's target,
    on the disk would find them outside."""
    rng = random.Random(20261206)
    parts = ["a", "b", "..", ".", "", "c d", "\\", "a\\..", "...", "b.."]

    def path() -> str:
        name = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 5)))
        return ("/" if rng.random() < 0.1 else "") + name

    dest = (tmp_path / "fresh").resolve()
    dest.mkdir()
    refused = kept = 0
    for _ in range(3000):
        info = tarfile.TarInfo(path())
        info.type = rng.choice([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE])
        if info.issym():
            info.linkname = path()
        expected = _resolved_check(info, dest)
        try:
            _check_member(info, str(dest))
        except UnsafeSnapshot:
            assert not expected, (info.name, info.linkname)
            refused += 1
        else:
            assert expected, (info.name, info.linkname)
            kept += 1
    assert not any(dest.iterdir())
    assert refused > 500 and kept > 500, (refused, kept)


@pytest.mark.parametrize("field", ["name", "linkname"])
def test_a_nul_byte_in_a_name_is_an_unsafe_snapshot(field: str, tmp_path: Path) -> None:
    info = member("pkg/a.py", tarfile.SYMTYPE, "b.py")
    setattr(info, field, getattr(info, field).replace(".py", "\0.py"))
    with pytest.raises(UnsafeSnapshot, match="NUL"):
        _check_member(info, str(tmp_path))
