"""The workspace runner's wire format on its own: trees packed and unpacked (and what either refuses), parcels read
as untrusted, the command line's paths moved under the runner's folder, what the caller sends (a secret named on
the command line never), and the setting that turns the runner on."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from libs.sandbox.protected_paths import ProtectedPaths
from libs.sandbox.remote.parcel import ParcelError, read_parcel, write_parcel
from libs.sandbox.remote.shipment import canonical_argument, fixed_folders, mirrored_argument, plan_shipment
from libs.sandbox.remote.trees import TreeRefused, pack_tree, unpack_tree
from libs.settings import SettingsError, load_runner_settings

# trees


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "model.py").write_text("x = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "pkg" / "alias.py").symlink_to("model.py")
    (root / "empty").mkdir()
    return root


def test_a_tree_round_trips_with_its_links_and_executable_bits(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    pack_tree(source, tmp_path / "tree.tar")
    unpack_tree(tmp_path / "tree.tar", tmp_path / "copy")
    copy = tmp_path / "copy"
    assert (copy / "pkg" / "model.py").read_text() == "x = 1\n"
    assert os.readlink(copy / "pkg" / "alias.py") == "model.py"
    assert os.access(copy / "run.sh", os.X_OK) and not os.access(copy / "pkg" / "model.py", os.X_OK)
    assert (copy / "empty").is_dir()


def test_the_same_tree_packs_to_the_same_bytes(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    pack_tree(source, tmp_path / "a.tar")
    os.utime(source / "pkg" / "model.py", (1, 1))
    pack_tree(source, tmp_path / "b.tar")
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()


def test_a_protected_path_inside_is_sent_as_an_empty_stand_in(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    (source / "keys").mkdir()
    (source / "keys" / "signing.key").write_text("secret")
    (source / "token").write_text("secret")
    pack_tree(source, tmp_path / "tree.tar", covered=[source / "keys", source / "token"])
    assert b"secret" not in (tmp_path / "tree.tar").read_bytes()
    unpack_tree(tmp_path / "tree.tar", tmp_path / "copy")
    assert list((tmp_path / "copy" / "keys").iterdir()) == [] and (tmp_path / "copy" / "token").read_text() == ""


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside", "pkg/../../outside"])
def test_packing_refuses_a_link_out_of_the_tree(tmp_path: Path, target: str) -> None:
    source = _tree(tmp_path / "source")
    (source / "link").symlink_to(target)
    with pytest.raises(TreeRefused, match="link points out"):
        pack_tree(source, tmp_path / "tree.tar")


def test_packing_refuses_a_special_file(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    os.mkfifo(source / "pipe")
    with pytest.raises(TreeRefused, match="not a regular file"):
        pack_tree(source, tmp_path / "tree.tar")


def _tar(path: Path, *members: tarfile.TarInfo) -> Path:
    with tarfile.open(path, "w") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, size: int = 1, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size if kind == tarfile.REGTYPE else 0, link
    return info


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([_member("a"), _member("a")], "twice"),
        ([_member("a"), _member("b", tarfile.LNKTYPE, link="a")], "not a regular file"),
        ([_member("dev", tarfile.CHRTYPE)], "not a regular file"),
        ([_member("fifo", tarfile.FIFOTYPE)], "not a regular file"),
        ([_member("./a")], "unsafe member name"),
        ([_member("a//b")], "unsafe member name"),
        ([_member("a"), _member("a/b")], "not a folder"),
        ([_member("big", size=2048)], "more than 1024 bytes"),
    ],
    ids=["duplicate", "hard-link", "device", "fifo", "dot", "empty-part", "under-a-file", "too-big"],
)
def test_unpacking_refuses_an_unsafe_tree_before_writing_anything(
    tmp_path: Path, members: list[tarfile.TarInfo], words: str
) -> None:
    archive = _tar(tmp_path / "tree.tar", *members)
    with pytest.raises(TreeRefused, match=words):
        unpack_tree(archive, tmp_path / "copy", max_bytes=1024)
    assert not (tmp_path / "copy").exists()


def test_unpacking_refuses_too_many_entries(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "tree.tar", *(_member(f"f{index}") for index in range(11)))
    with pytest.raises(TreeRefused, match="more than 10 entries"):
        unpack_tree(archive, tmp_path / "copy", max_entries=10)


# parcels


def _limits(name: str) -> int | None:
    return 16 if name in ("stdout", "outputs/0") else None


def _read(path: Path, tmp_path: Path) -> object:
    into = tmp_path / "into"
    into.mkdir(exist_ok=True)
    return read_parcel(path, manifest="answer.json", manifest_limit=64, limit_of=_limits, max_members=3, into=into)


def test_a_parcel_round_trips(tmp_path: Path) -> None:
    write_parcel(tmp_path / "p.tar", [("answer.json", b"{}"), ("stdout", b"hello")])
    parcel = _read(tmp_path / "p.tar", tmp_path)
    assert parcel.manifest == b"{}"  # type: ignore[attr-defined]
    assert parcel.members["stdout"].path.read_bytes() == b"hello"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([("stdout", b"x"), ("answer.json", b"{}")], "first member"),
        ([("answer.json", b"{}"), ("stdout", b"x"), ("stdout", b"y")], "twice"),
        ([("answer.json", b"{}"), ("stderr", b"x")], "unexpected member"),
        ([("answer.json", b"{}"), ("stdout", b"x" * 17)], "larger than 16"),
        ([("answer.json", b"x" * 65)], "larger than 64"),
        ([("answer.json", b"{}"), ("stdout", b""), ("outputs/0", b""), ("outputs/0", b"")], "more than 3"),
    ],
    ids=["order", "duplicate", "unexpected", "member-too-big", "manifest-too-big", "too-many"],
)
def test_a_parcel_of_the_wrong_shape_is_refused(tmp_path: Path, members: list[tuple[str, bytes]], words: str) -> None:
    write_parcel(tmp_path / "p.tar", members)
    with pytest.raises(ParcelError, match=words):
        _read(tmp_path / "p.tar", tmp_path)


def test_a_link_member_and_garbage_are_refused(tmp_path: Path) -> None:
    _tar(tmp_path / "p.tar", _member("answer.json", tarfile.SYMTYPE, link="/etc/passwd"))
    with pytest.raises(ParcelError, match="not a regular file"):
        _read(tmp_path / "p.tar", tmp_path)
    (tmp_path / "g.tar").write_bytes(os.urandom(4096))
    with pytest.raises(ParcelError):
        _read(tmp_path / "g.tar", tmp_path)


# the command line


@pytest.mark.parametrize(
    ("argument", "moved"),
    [
        ("/data/train.csv", "/job/root/data/train.csv"),
        ("--output=/out/p.csv", "--output=/job/root/out/p.csv"),
        ("/data/../../etc/shadow", "/job/root/etc/shadow"),
        ("/", "/"),
        ("relative/path.csv", "relative/path.csv"),
        ("-c", "-c"),
        ("/usr/share/dict/words", "/usr/share/dict/words"),
    ],
)
def test_path_arguments_move_under_the_runners_folder_but_system_ones(argument: str, moved: str) -> None:
    assert mirrored_argument(argument, Path("/job/root"), [Path("/usr")]) == moved


def test_an_argument_is_spelled_as_the_sandbox_resolves_it(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "data.csv").write_text("x\n")
    (tmp_path / "alias").symlink_to(real)
    assert canonical_argument(str(tmp_path / "alias" / "data.csv"), "") == str(real / "data.csv")
    assert canonical_argument(str(tmp_path / "alias" / "new.csv"), "") == str(real / "new.csv")
    named = canonical_argument(str(tmp_path / "alias" / "data.csv"), "--output")
    assert named == str(real / "data.csv")
    assert canonical_argument("--out=" + str(tmp_path / "alias" / "o.csv"), "") == "--out=" + str(real / "o.csv")


def test_the_caller_sends_inputs_but_never_a_secret(tmp_path: Path) -> None:
    cwd, data, keys, out = (tmp_path / name for name in ("work/cwd", "data", "keys", "out"))
    for folder in (cwd, data, keys, out):
        folder.mkdir(parents=True)
    (cwd / "inside.csv").write_text("x\n")
    (data / "train.csv").write_text("x\n")
    (keys / "signing.key").write_text("secret")
    protected = ProtectedPaths(secrets=(keys,), private=())
    argv = [
        "python",
        "run.py",
        str(data / "train.csv"),
        str(data),  # holds the first input: sent once, as a folder
        str(cwd / "inside.csv"),  # in the revision
        str(keys / "signing.key"),
        str(cwd.parent),  # holds the working directory
        "--output",
        str(out / "p.csv"),
    ]
    shipment = plan_shipment(argv, cwd, protected, fixed_folders())
    assert [(given.path, given.kind) for given in shipment.inputs] == [(data, "folder")]
    assert shipment.output_folders == (out,) and shipment.output_files == (out / "p.csv",)
    assert any(item.startswith(f"{keys / 'signing.key'}: inside the protected") for item in shipment.refused_inputs)
    assert any(item.startswith(f"{cwd.parent}: holds the working directory") for item in shipment.refused_inputs)
    assert shipment.argv[:3] == ("python", "run.py", str(data / "train.csv"))


# the setting


@pytest.mark.parametrize(
    ("raw", "url"),
    [
        ("", None),
        ("local", None),
        ("http://runner:8090", "http://runner:8090"),
        ("https://r.example/", "https://r.example"),
    ],
)
def test_the_runner_is_chosen_by_one_setting(monkeypatch: pytest.MonkeyPatch, raw: str, url: str | None) -> None:
    monkeypatch.setenv("MODELGUARD_RUNNER", raw)
    assert load_runner_settings().url == url


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("MODELGUARD_RUNNER", "runner:8090"),
        ("MODELGUARD_RUNNER", "ftp://runner"),
        ("MODELGUARD_RUNNER", "http://runner:99999"),
        ("MODELGUARD_RUNNER", "http://runner:8090/?x=1"),
        ("MODELGUARD_RUNNER_MARGIN_S", "0"),
        ("MODELGUARD_RUNNER_CONCURRENCY", "0"),
        ("MODELGUARD_RUNNER_PORT", "http"),
    ],
)
def test_a_bad_runner_setting_is_one_readable_error(monkeypatch: pytest.MonkeyPatch, name: str, raw: str) -> None:
    monkeypatch.setenv(name, raw)
    with pytest.raises(SettingsError, match=name):
        load_runner_settings()


def test_packing_refuses_links_that_lead_out_through_other_links(tmp_path: Path) -> None:
    """Each link's own text stays in the tree; followed through the other, one leads to the folder above it."""
    source = _tree(tmp_path / "source")
    (source / "p" / "q").mkdir(parents=True)
    (source / "p" / "q" / "up").symlink_to("../..")
    (source / "e").symlink_to("p/q/up/..")
    with pytest.raises(TreeRefused, match="link points out of it through its other links"):
        pack_tree(source, tmp_path / "tree.tar")


@pytest.mark.parametrize("up_first", [True, False])
def test_unpacking_refuses_links_that_lead_out_through_other_links(tmp_path: Path, up_first: bool) -> None:
    links = [_member("p/q/up", tarfile.SYMTYPE, link="../.."), _member("e", tarfile.SYMTYPE, link="p/q/up/..")]
    folders = [_member("p", tarfile.DIRTYPE), _member("p/q", tarfile.DIRTYPE)]
    archive = _tar(tmp_path / "tree.tar", *folders, *(links if up_first else links[::-1]))
    with pytest.raises(TreeRefused, match="link points out of the tree through its other links"):
        unpack_tree(archive, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_tree_keeps_links_that_lead_inside_through_other_links(tmp_path: Path) -> None:
    source = _tree(tmp_path / "source")
    (source / "p" / "q").mkdir(parents=True)
    (source / "p" / "q" / "up").symlink_to("../..")
    (source / "via").symlink_to("p/q/up/p")
    pack_tree(source, tmp_path / "tree.tar")
    unpack_tree(tmp_path / "tree.tar", tmp_path / "copy")
    assert os.readlink(tmp_path / "copy" / "via") == "p/q/up/p" and (tmp_path / "copy" / "via" / "q").is_dir()
