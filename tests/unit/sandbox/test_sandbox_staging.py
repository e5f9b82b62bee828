"""The sandbox's own folders: handed to the command's uid, copies of inputs it could not read in place,
and outputs copied back under rules (no links, no replacing what the command line did not name)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from libs.sandbox.confinement import Identity
from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.staging import Staging, readable_by

NOBODY = Identity(65534, 65534, drop_from_root=True)
SELF = Identity(os.getuid(), os.getgid(), drop_from_root=False)
as_root = pytest.mark.skipif(os.getuid() != 0, reason="handing folders to another uid needs root")


def test_readable_by_follows_the_permission_bits_of_every_entry(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    (folder / "open.csv").write_text("x")
    (folder / "open.csv").chmod(0o644)
    assert readable_by(folder, NOBODY)
    (folder / "closed.csv").write_text("x")
    (folder / "closed.csv").chmod(0o600)
    assert not readable_by(folder, NOBODY)
    assert readable_by(folder / "open.csv", NOBODY)
    assert readable_by(folder, SELF)


@as_root
def test_scratch_folders_belong_to_the_commands_uid(tmp_path: Path) -> None:
    home, tmpdir = Staging(tmp_path, NOBODY).scratch()
    assert (home.stat().st_uid, tmpdir.stat().st_uid) == (65534, 65534)


@as_root
def test_an_input_the_uid_cannot_read_is_copied_for_it_and_the_original_left_alone(tmp_path: Path) -> None:
    private = tmp_path / "eval.csv"
    private.write_text("labels")
    private.chmod(0o600)
    staging = Staging(tmp_path / "staging", NOBODY)
    mount = staging.readable(private)
    assert mount.target == private and mount.source != private
    assert mount.source.read_text() == "labels" and mount.source.stat().st_uid == 65534
    assert oct(private.stat().st_mode & 0o777) == "0o600"
    public = tmp_path / "features.csv"
    public.write_text("f")
    public.chmod(0o644)
    assert staging.readable(public).source == public


@as_root
def test_a_folder_that_holds_the_staging_folder_is_refused_not_copied_into_itself(tmp_path: Path) -> None:
    """A working directory that holds ModelGuard's temporary folder: copied, the copy would land inside what is being
    copied, over and over until names are too long."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(mode=0o700)  # the command's uid cannot read it: it would be copied
    (workspace / "run.py").write_text("print(1)")
    staging = Staging(workspace / "tmp" / "modelguard-run-x", NOBODY)
    staging.root.mkdir(parents=True)
    with pytest.raises(CommandNotAllowed, match="holds the sandbox's own folder"):
        staging.readable(workspace)
    assert list(staging.root.iterdir()) == []  # nothing was copied
    elsewhere = Staging(tmp_path / "staging", NOBODY)
    assert elsewhere.readable(workspace).source != workspace  # the same folder, staged elsewhere, is copied


def test_outputs_come_back_without_links_and_without_replacing_unnamed_files(tmp_path: Path) -> None:
    real = tmp_path / "out"
    real.mkdir()
    (real / "kept.csv").write_text("ModelGuard's")
    (real / "named.csv").write_text("old")
    staging = Staging(tmp_path / "staging", SELF)
    staged = staging.output_folder(real).source
    (staged / "named.csv").write_text("new")
    (staged / "kept.csv").write_text("overwritten?")
    (staged / "sub").mkdir()
    (staged / "sub" / "extra.csv").write_text("extra")
    (staged / "link").symlink_to("/etc/passwd")
    (staged / "input.csv").write_text("")  # the empty stand-in of an input mounted there
    collected = staging.collect_outputs([real / "named.csv"], mounted=[real, real / "input.csv"])
    assert (real / "named.csv").read_text() == "new" and (real / "sub" / "extra.csv").read_text() == "extra"
    assert (real / "kept.csv").read_text() == "ModelGuard's"
    assert not (real / "link").exists() and not (real / "input.csv").exists()
    assert set(collected.written) == {str(real / "named.csv"), str(real / "sub" / "extra.csv")}
    assert sorted(collected.refused) == [
        f"{real / 'kept.csv'}: a file is already there and the command line did not name it as an output",
        f"{real / 'link'}: not a regular file",
    ]
