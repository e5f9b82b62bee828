"""The tar headers the parcel and tree readers take from the other side, attacked below the member level: tarfile
acts on an extended header (pax, GNU long name, sparse map) inside ``next()``, before either reader sees a member,
so what it would do with a hostile one (recurse through a chain, parse a huge one in quadratic time, build a
sparse map as long as the file) is refused there, with the reason, by ``libs/tar_headers.py``."""

from __future__ import annotations

import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from libs.sandbox.remote.parcel import ParcelError, read_parcel
from libs.sandbox.remote.trees import TreeRefused, pack_tree, unpack_tree
from libs.tar_headers import MAX_PAX_BYTES, HeaderRefused, pax_records
from tests.support.tar_blocks import END, extension, file_block, record


def _read_parcel(path: Path, tmp_path: Path) -> None:
    into = tmp_path / "into"
    into.mkdir()
    read_parcel(path, manifest="answer.json", manifest_limit=64, limit_of=lambda _: 1 << 20, max_members=8, into=into)


def _read_tree(path: Path, tmp_path: Path) -> None:
    unpack_tree(path, tmp_path / "tree")


Reader = Callable[[Path, Path], None]
READERS: list[tuple[Reader, type[Exception]]] = [(_read_parcel, ParcelError), (_read_tree, TreeRefused)]
READER_IDS = ["parcel", "tree"]


@pytest.mark.parametrize(
    "link",
    [extension(tarfile.XHDTYPE, record("path", "a")), extension(tarfile.GNUTYPE_LONGNAME, b"a\0")],
    ids=["pax", "gnu-long-name"],
)
@pytest.mark.parametrize(("reader", "refusal"), READERS, ids=READER_IDS)
def test_a_chain_of_extended_headers_is_refused_not_a_recursion_error(
    tmp_path: Path, link: bytes, reader: Reader, refusal: type[Exception]
) -> None:
    # tarfile reads the header after an extended header by calling itself: 3,000 of them in a row (3 MB) were a
    # RecursionError, which neither reader caught
    archive = tmp_path / "chain.tar"
    archive.write_bytes(link * 3000 + file_block("answer.json") + END)
    with pytest.raises(refusal, match=r"extended header|long name"):
        reader(archive, tmp_path)
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize(("reader", "refusal"), READERS, ids=READER_IDS)
def test_a_pax_header_past_its_bound_is_refused_before_tarfile_parses_it(
    tmp_path: Path, reader: Reader, refusal: type[Exception]
) -> None:
    # Python 3.11.7's tarfile looks for "hdrcharset" with a regex tried at every offset, each attempt running to the
    # end of a run of digits: quadratic in the header's size (6 s for 80 KB here, hours for the 4 MB an answer's
    # manifest may take). A pax header ModelGuard writes holds a path and a link target, each at most PATH_MAX.
    archive = tmp_path / "big.tar"
    archive.write_bytes(extension(tarfile.XHDTYPE, b"1" * (MAX_PAX_BYTES + 1)) + file_block("answer.json") + END)
    with pytest.raises(refusal, match=f"more than {MAX_PAX_BYTES} bytes"):
        reader(archive, tmp_path)


@pytest.mark.parametrize(("reader", "refusal"), READERS, ids=READER_IDS)
def test_a_pax_sparse_map_is_refused(tmp_path: Path, reader: Reader, refusal: type[Exception]) -> None:
    # GNU sparse 1.0: tarfile reads the map (one number a line, as many as the first line says) into a list before
    # the member is returned: about 20 bytes of memory a byte of the file, for a member that then reads as zeros
    records = b"".join(
        record(keyword, value)
        for keyword, value in [("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.realsize", "0")]
    )
    archive = tmp_path / "sparse.tar"
    sparse_map = b"1000\n" + b"0\n" * 2000
    archive.write_bytes(
        file_block("answer.json") + extension(tarfile.XHDTYPE, records) + file_block("stdout", sparse_map) + END
    )
    with pytest.raises(refusal, match=r"GNU\.sparse\.major"):
        reader(archive, tmp_path)
    assert not (tmp_path / "tree").exists()


def test_names_and_links_that_need_a_pax_header_still_round_trip(tmp_path: Path) -> None:
    source = tmp_path / "source"
    deep = source / ("1" * 200) / ("2" * 200)
    deep.mkdir(parents=True)
    (deep / "model.py").write_text("x = 1\n")
    (source / "caf\xe9.py").write_text("y = 2\n")
    (source / os.fsdecode(b"raw\xff.py")).write_text("z = 3\n")
    (source / "alias").symlink_to(deep.relative_to(source) / "model.py")
    pack_tree(source, tmp_path / "tree.tar")
    unpack_tree(tmp_path / "tree.tar", tmp_path / "copy")
    copy = tmp_path / "copy"
    assert (copy / deep.relative_to(source) / "model.py").read_text() == "x = 1\n"
    assert (copy / "caf\xe9.py").read_text() == "y = 2\n"
    assert (copy / os.fsdecode(b"raw\xff.py")).read_text() == "z = 3\n"
    assert (copy / "alias").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"99 path=a\n", "malformed"),
        (b"9 path=a\n9 path=b\n", "path twice"),
        (b"10 path=ab ", "malformed"),
        (b"9 path_a\n", "'path_a'"),
        (b"x path=a\n", "malformed"),
        (b"1" * 30 + b" path=a\n", "malformed"),
        (b"12 size=-99\n", "'size'"),
    ],
    ids=["length-past-the-end", "twice", "no-newline", "no-equals", "no-length", "length-too-long", "size"],
)
def test_a_pax_header_is_read_strictly(data: bytes, words: str) -> None:
    with pytest.raises(HeaderRefused, match=words):
        pax_records(data)
