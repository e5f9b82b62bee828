"""Which command arguments are inputs (made readable) and which declare outputs (folder made writable), and
which the sandbox refuses."""

from __future__ import annotations

from pathlib import Path

from libs.sandbox.arguments import declared_paths
from libs.sandbox.protected_paths import ProtectedPaths

NOTHING = ProtectedPaths(secrets=(), private=())


def test_existing_paths_are_inputs_and_new_ones_outputs(tmp_path: Path) -> None:
    data = tmp_path / "in" / "eval.csv"
    data.parent.mkdir()
    data.write_text("a\n")
    out = tmp_path / "out"
    out.mkdir()
    cwd = tmp_path / "rev"
    cwd.mkdir()
    arguments = ["-m", "pkg.features", "--data", str(data), "--output", str(out / "features.csv"), "--x=/nope/y"]
    declared = declared_paths(arguments, NOTHING, cwd=cwd)
    assert declared.inputs == (data,)
    assert declared.outputs == (out,) and declared.output_files == (out / "features.csv",)


def test_an_output_option_makes_even_an_existing_file_an_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    existing = out / "customers.csv"
    existing.write_text("old")
    cwd = tmp_path / "rev"
    cwd.mkdir()
    declared = declared_paths(["--output", str(existing), f"--junitxml={out / 'j.xml'}"], NOTHING, cwd=cwd)
    assert declared.outputs == (out,) and declared.inputs == ()
    assert declared.output_files == (existing, out / "j.xml")


def test_inputs_inside_a_secret_or_holding_a_protected_path_are_refused(tmp_path: Path) -> None:
    keys, home = tmp_path / "home" / "keys", tmp_path / "home"
    keys.mkdir(parents=True)
    (keys / "a.key").write_text("k")
    data = home / "state" / "eval.csv"
    data.parent.mkdir()
    data.write_text("d")
    protected = ProtectedPaths(secrets=(keys,), private=(home,))
    cwd = tmp_path / "rev"
    cwd.mkdir()
    declared = declared_paths([str(keys / "a.key"), str(home), "/", str(data)], protected, cwd=cwd)
    assert declared.inputs == (data,), "an input inside a private folder (MODELGUARD_HOME) is the command's own"
    assert declared.refused_inputs == (
        f"{keys / 'a.key'}: inside the protected {keys}",
        f"{home}: holds the protected {keys}",
        "/: the whole file system",
    )


def test_inputs_already_readable_are_not_mounted_again(tmp_path: Path) -> None:
    cwd = tmp_path / "rev"
    cwd.mkdir()
    (cwd / "local.csv").write_text("x")
    declared = declared_paths([str(cwd / "local.csv"), "/usr/bin"], NOTHING, cwd=cwd, fixed=[Path("/usr")])
    assert declared.inputs == () and declared.refused_inputs == ()


def test_output_folders_holding_or_inside_protected_or_fixed_folders_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "keys").mkdir(parents=True)
    cwd = tmp_path / "work" / "rev"
    cwd.mkdir(parents=True)
    protected = ProtectedPaths(secrets=(home / "keys",), private=(home,))
    arguments = [
        str(tmp_path / "new.csv"),  # holds the home
        str(home / "keys" / "forged.key"),
        str(tmp_path / "work" / "next-to-the-revision.csv"),
        str(cwd / "inside.csv"),
        "/usr/lib/evil.so",
        "/new-at-root.txt",
    ]
    declared = declared_paths(arguments, protected, cwd=cwd, fixed=[Path("/usr")])
    assert declared.outputs == ()
    assert declared.refused_outputs == (
        f"{tmp_path}: holds the protected {home / 'keys'}",
        f"{home / 'keys'}: inside the protected {home / 'keys'}",
        f"{tmp_path / 'work'}: the working directory is read-only",
        f"{cwd}: the working directory is read-only",
        "/usr/lib: a system or interpreter folder (/usr)",
        "/: the root folder",
    )


def test_an_output_folder_inside_a_private_folder_is_allowed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    scratch = home / "state" / "scratch"
    scratch.mkdir(parents=True)
    cwd = tmp_path / "rev"
    cwd.mkdir()
    declared = declared_paths([str(scratch / "f.csv")], ProtectedPaths(secrets=(), private=(home,)), cwd=cwd)
    assert declared.outputs == (scratch,)
