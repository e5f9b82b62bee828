"""The command line explains itself: a version, help on every command and flag, and one exit-code table that the
README's matches and every outcome of `investigate` is in."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from contracts.outcomes import RUN_OUTCOMES as OUTCOMES
from libs.version import MODELGUARD_VERSION
from modelguard.cli import main, parser
from modelguard.exit_codes import EXIT_CODES, OUTCOME_EXIT_CODES, exit_code_lines

README = Path(__file__).resolve().parents[3] / "README.md"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"modelguard {MODELGUARD_VERSION}"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_command_and_every_flag_has_help() -> None:
    root = parser()
    [sub] = [a for a in root._actions if isinstance(a, argparse._SubParsersAction)]
    summaries = {choice.dest: choice.help for choice in sub._choices_actions}
    commands = _subcommands()
    assert set(commands) >= {"stack", "submit", "verify", "investigate", "demo", "bench", "guard", "republish"}
    missing = []
    for name, command in commands.items():
        if not summaries.get(name) or not command.description:
            missing.append(name)
        for action in command._actions:
            if not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(f"{name} {action.option_strings or action.dest}")
    assert missing == []


def test_the_help_lists_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code in EXIT_CODES:
        assert re.search(rf"^\s+{code.code}\s+{code.name}\s", out, re.MULTILINE), code.name
    assert len(exit_code_lines()) >= len(EXIT_CODES)


def _readme_table() -> list[tuple[int, str, str]]:
    section = README.read_text().split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"^\| \d+ \|", line)]
    return [
        (int(cells[0]), cells[1], cells[2]) for cells in ([c.strip() for c in r.strip("|").split("|")] for r in rows)
    ]


def test_the_readmes_table_is_the_code_table() -> None:
    assert _readme_table() == [(c.code, c.name, c.commands) for c in EXIT_CODES]


def test_every_outcome_of_investigate_has_its_named_code() -> None:
    assert set(OUTCOME_EXIT_CODES) == set(OUTCOMES)
    named = {c.name: c.code for c in EXIT_CODES}
    for outcome, code in OUTCOME_EXIT_CODES.items():
        assert named.get(outcome, code if code == 0 else None) == code, outcome
    assert named["environment_failed"] == 15


def test_the_demo_refuses_a_used_home_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "used"
    (home / "keys").mkdir(parents=True)
    (home / "ledger.sqlite").write_bytes(b"someone's ledger")
    monkeypatch.setenv("MODELGUARD_HOME", str(home))
    assert main(["demo", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"MODELGUARD_HOME={home} has been used already (it holds keys, ledger.sqlite)" in err
    assert (home / "ledger.sqlite").read_bytes() == b"someone's ledger"  # left alone
    assert not (tmp_path / "out").exists()


def test_the_demo_takes_a_fresh_home_as_it_is_and_defaults_to_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modelguard.demo_home import default_home, demo_home

    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "fresh"))
    assert demo_home(tmp_path / "out") == (tmp_path / "fresh").resolve()
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "empty"))
    assert demo_home(tmp_path / "out") == (tmp_path / "empty").resolve()
    monkeypatch.delenv("MODELGUARD_HOME")
    assert demo_home(tmp_path / "out") == default_home(tmp_path / "out") == (tmp_path / "out" / "stack").resolve()
