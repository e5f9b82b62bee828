"""The guard's report: every check, in a fixed order, with its result and reason.

A check is ``passed``, ``failed`` or ``skipped`` (it could not run because an earlier check failed, or it
does not apply, e.g. ``declared_files`` when nobody declared files). The patch is accepted only when no
check failed; a skipped check never accepts anything on its own, because a skip always follows a failure
or concerns an input that was not given.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field

UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"})

CHECK_NAMES: tuple[str, ...] = (
    "patch_readable",
    "diff_parses",
    "not_empty",
    "no_binary",
    "no_symlinks",
    "paths_inside_workspace",
    "file_operations",
    "file_types",
    "permitted_paths",
    "protected_paths",
    "generated_code",
    "max_files",
    "max_changed_lines",
    "strategy_permitted",
    "declared_files",
    "no_hidden_text",
    "applies_cleanly",
    "python_syntax",
    "allowed_new_code",
    "always_refused",
    "forbidden_constructs",
)

CheckStatus = Literal["passed", "failed", "skipped"]
STATUS_LABEL: dict[CheckStatus, str] = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True)

    detail: str
    path: str | None = None
    line: int | None = None

    def describe(self) -> str:
        where = self.path + (f":{self.line}" if self.line is not None else "") if self.path else ""
        return f"{where}: {self.detail}" if where else self.detail


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    status: CheckStatus
    reason: str
    findings: tuple[Finding, ...] = ()


class GuardReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    checks: tuple[CheckResult, ...]
    files: tuple[str, ...] = ()
    added_lines: int = 0
    removed_lines: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def accepted(self) -> bool:
        return not self.failed()

    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(check for check in self.checks if check.status == "failed")

    def check(self, name: str) -> CheckResult:
        return next(check for check in self.checks if check.name == name)


def passed(name: str, reason: str) -> CheckResult:
    return CheckResult(name=name, status="passed", reason=reason)


def skipped(name: str, reason: str) -> CheckResult:
    return CheckResult(name=name, status="skipped", reason=reason)


def judged(name: str, findings: list[Finding], ok: str, failed: str) -> CheckResult:
    """Passed with ``ok`` when there is no finding, else failed with ``failed`` and every finding."""
    if not findings:
        return passed(name, ok)
    return CheckResult(name=name, status="failed", reason=failed, findings=tuple(findings))


def human_lines(report: GuardReport) -> list[str]:
    """One line per check (``PASS name: reason``), then the decision. What a finding quotes from the patch
    (a path, an identifier) is escaped: a control character cannot move the cursor, clear the terminal or
    start a new line that reads like another check."""
    lines = []
    for check in report.checks:
        reason = check.reason
        if check.findings:
            reason += ": " + "; ".join(finding.describe() for finding in check.findings)
        lines.append(f"{STATUS_LABEL[check.status]} {check.name}: {printable(reason)}")
    failed = [check.name for check in report.failed()]
    lines.append(f"REFUSED: {', '.join(failed)}" if failed else "ACCEPTED")
    return lines


def printable(text: str) -> str:
    """``text`` with every control, format, separator, private-use, surrogate or unassigned character
    escaped (``\x1b``, ``\u202e``), and backslashes doubled so that an escape cannot be forged."""
    escaped = []
    for char in text:
        code = ord(char)
        if char == "\\":
            escaped.append("\\\\")
        elif unicodedata.category(char) not in UNPRINTABLE_CATEGORIES:
            escaped.append(char)
        elif code < 0x100:
            escaped.append(f"\\x{code:02x}")
        elif code < 0x10000:
            escaped.append(f"\\u{code:04x}")
        else:
            escaped.append(f"\\U{code:08x}")
    return "".join(escaped)
