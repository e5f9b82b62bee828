"""Snapshots and the data windows archive, attacked below the member level. Both arrive from a pull request's CI
(``PUT /artifacts``), and tarfile acts on an extended header (pax, pax global, GNU long name, sparse map) inside
``next()``, before ``extract_snapshot`` sees a member: it would recurse through a chain of them, parse a big pax
header in quadratic time (Python 3.11.7) and read a sparse map into a list as long as the file says. The reader
takes only what ``git archive`` and ModelGuard's data windows writer write there; anything else is an
``UnsafeSnapshot`` with the reason, which the phases and the detector's referee already turn into a refusal."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from contracts.common import IncidentState, PolicyRef
from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.bus.handler_errors import RejectedInput
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.tar_headers import MAX_PAX_BYTES
from libs.workspace.data_windows import unpack_data_windows
from libs.workspace.git import run_git
from libs.workspace.incident_workspace import incident_workspace
from libs.workspace.snapshot import UnsafeSnapshot, extract_snapshot, snapshot_commit
from tests.support.sample_events import gate, workspace
from tests.support.tar_blocks import END, extension, file_block, record
from tests.unit.workspace.test_workspace_snapshot import GIT_IDENTITY, reference_extract, tree_facts

COMMENT = record("comment", "0" * 40)
"""The global header ``git archive`` writes first: the commit's id."""


def _snapshot(data: bytes, dest: Path) -> None:
    extract_snapshot(data, dest)


def _data_windows(data: bytes, dest: Path) -> None:
    unpack_data_windows(data, dest)


Reader = Callable[[bytes, Path], None]
READERS = pytest.mark.parametrize("read", [_snapshot, _data_windows], ids=["snapshot", "data-windows"])


@READERS
@pytest.mark.parametrize(
    "link",
    [
        extension(tarfile.XHDTYPE, record("path", "a")),
        extension(tarfile.GNUTYPE_LONGNAME, b"a\0"),
        extension(tarfile.XGLTYPE, COMMENT),
    ],
    ids=["pax", "gnu-long-name", "pax-global"],
)
def test_a_chain_of_extended_headers_is_an_unsafe_snapshot_not_a_recursion_error(
    read: Reader, link: bytes, tmp_path: Path
) -> None:
    # tarfile reads the header after an extended header by calling itself: 3,000 in a row (3 MB) were a
    # RecursionError out of extract_snapshot, which no phase catches
    with pytest.raises(UnsafeSnapshot, match=r"extended header|long name|global header"):
        read(link * 3000 + file_block("approval/train.csv") + END, tmp_path / "out")
    assert not any((tmp_path / "out").iterdir())


@READERS
@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.XGLTYPE], ids=["pax", "pax-global"])
def test_a_pax_header_past_its_bound_is_refused_before_tarfile_parses_it(
    read: Reader, kind: bytes, tmp_path: Path
) -> None:
    # Python 3.11.7's tarfile looks for "hdrcharset" with a regex tried at every offset, each attempt running to the
    # end of a run of digits: quadratic in the header's size (6 s for 80 KB, hours for the 256 MiB a snapshot may
    # be). git archive's pax headers hold a path or a link target; its global header, a commit id and a time.
    with pytest.raises(UnsafeSnapshot, match=f"more than {MAX_PAX_BYTES} bytes"):
        read(extension(kind, b"1" * (MAX_PAX_BYTES + 1)) + file_block("a.py") + END, tmp_path / "out")


@READERS
def test_a_pax_sparse_map_is_refused(read: Reader, tmp_path: Path) -> None:
    # GNU sparse 1.0: tarfile reads the map (one number a line, as many as its first line says) into a list before
    # the member is returned: about 20 bytes of memory a byte of the archive, for a member that reads as zeros
    records = b"".join(
        record(keyword, value)
        for keyword, value in [("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.realsize", "0")]
    )
    sparse_map = b"1000\n" + b"0\n" * 2000
    with pytest.raises(UnsafeSnapshot, match=r"GNU\.sparse\.major"):
        read(extension(tarfile.XHDTYPE, records) + file_block("a.py", sparse_map) + END, tmp_path / "out")


@pytest.mark.parametrize(
    ("archive", "words"),
    [
        (file_block("a.py") + extension(tarfile.XGLTYPE, COMMENT) + file_block("b.py"), "global header at byte"),
        (extension(tarfile.XGLTYPE, record("path", "elsewhere.py")) + file_block("a.py"), "'path'"),
        (extension(tarfile.XGLTYPE, COMMENT + record("mtime", "1e308")) + file_block("a.py"), "mtime"),
        (extension(tarfile.XGLTYPE, COMMENT + record("mtime", "nan")) + file_block("a.py"), "mtime"),
        (extension(tarfile.XHDTYPE, record("comment", "x")) + file_block("a.py"), "'comment'"),
        (extension(tarfile.XHDTYPE, record("mtime", "1")) + file_block("a.py"), "'mtime'"),
        (extension(tarfile.XHDTYPE, record("size", "99")) + file_block("a.py"), "'size'"),
        (extension(tarfile.XHDTYPE, record("path", "a.py")) + extension(tarfile.XGLTYPE, COMMENT), "follows"),
        (extension(tarfile.GNUTYPE_LONGNAME, b"a.py\0") + file_block("x"), "GNU long name"),
        (extension(tarfile.GNUTYPE_LONGLINK, b"a.py\0") + file_block("x"), "GNU long link"),
    ],
    ids=[
        "global-not-first",
        "global-path",
        "global-mtime-not-a-number",
        "global-mtime-nan",
        "member-comment",
        "member-mtime",
        "member-size",
        "global-after-pax",
        "gnu-long-name",
        "gnu-long-link",
    ],
)
def test_headers_git_archive_never_writes_are_refused_with_the_reason(
    archive: bytes, words: str, tmp_path: Path
) -> None:
    with pytest.raises(UnsafeSnapshot, match=words):
        extract_snapshot(archive + END, tmp_path / "out")


def test_a_time_no_file_can_have_is_refused_not_an_overflow_error(tmp_path: Path) -> None:
    # a ustar number field may be written in base 256: a modification time of 2**80 seconds was an OverflowError
    # out of os.utime after the files were written
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        far = tarfile.TarInfo("a.py")
        far.size, far.mtime = 1, 2**80
        archive.addfile(far, io.BytesIO(b"x"))
    with pytest.raises(UnsafeSnapshot, match="modification time"):
        extract_snapshot(buffer.getvalue(), tmp_path / "out")


def test_a_hostile_snapshot_rejects_the_incident_with_the_reason(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "artifacts")
    bundle = load_bundle(Path(__file__).resolve().parents[3] / "fixtures/scenarios/churn-monthly-spend")
    policy = PolicyRef(name="p", artifact=store.put(effective_policy_bytes(bundle, read_central_policy()), "x"))
    chain = extension(tarfile.XHDTYPE, record("path", "a")) * 3000 + file_block("a.py") + END
    hostile = workspace().model_copy(update={"base_snapshot": store.put(chain, "application/x-tar")})
    state = IncidentState(run_id="r", workspace=hostile, policy=policy, gate=gate())
    with pytest.raises(RejectedInput) as caught, incident_workspace(store, state, tmp_path / "scratch"):
        pass
    assert caught.value.reason == "inputs-unavailable"
    assert "extended header" in caught.value.detail


# what real snapshots hold there, through git archive itself: each still extracts as tarfile extracts it


def _commit(root: Path, date: str) -> bytes:
    run_git(["add", "--all"], root)
    dated = {**GIT_IDENTITY, "GIT_COMMITTER_DATE": date}
    run_git(["commit", "--quiet", "-m", "tree"], root, extra_env=dated)
    return snapshot_commit(root, "HEAD")


def _tree_git_archive_extends(root: Path) -> None:
    """Names and link targets past ustar's fields, a non-UTF-8 name, a non-ASCII one and an executable."""
    deep = root / ("d" * 120) / ("e" * 150)
    deep.mkdir(parents=True)
    (deep / "model.py").write_text("x = 1\n")
    (root / ("f" * 99 + ".py")).write_text("y = 2\n")
    (root / os.fsdecode(b"raw\xff.py")).write_text("z = 3\n")
    (root / "caf\xe9.py").write_text("w = 4\n")
    (root / "long-link").symlink_to(deep.relative_to(root) / "model.py")
    (root / "short-link").symlink_to("caf\xe9.py")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)


@pytest.mark.parametrize(
    "date", ["@1700000000 +0000", "@99999999999 +0000"], ids=["commit-time", "past-ustar-time-global-mtime"]
)
def test_what_git_archive_writes_extracts_as_tarfile_extracts_it(date: str, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    run_git(["init", "--quiet", "--initial-branch=main"], root)
    _tree_git_archive_extends(root)
    data = _commit(root, date)
    assert data[156:157] == tarfile.XGLTYPE and b" path=" in data and b" linkpath=" in data
    if date.startswith("@99999999999"):
        assert b" mtime=99999999999\n" in data[: 2 * tarfile.BLOCKSIZE]
    reference_extract(data, tmp_path / "reference")
    extract_snapshot(data, tmp_path / "ours")
    assert tree_facts(tmp_path / "ours") == tree_facts(tmp_path / "reference")
    assert (tmp_path / "ours" / "long-link").read_text() == "x = 1\n"
