"""Every exit code of the ``modelguard`` command, in one table: the README's "Exit codes" table is checked against
it by a test, and ``modelguard --help`` prints it.

0, 1 and 2 mean the same for every command; 3 is the patch guard's refusal; 10 to 15 are the outcomes of
``investigate`` (docs/scenarios.md); 130 is an interrupt.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from contracts.outcomes import Outcome

OK = 0
FAILURE = 1
USAGE = 2
REFUSED = 3
INTERRUPTED = 130


@dataclass(frozen=True)
class ExitCode:
    code: int
    name: str
    commands: str
    meaning: str


OUTCOME_EXIT_CODES: dict[Outcome, int] = {
    Outcome.GATE_PASSED: OK,
    Outcome.REPAIR_VALIDATED: 10,
    Outcome.REPAIR_WITHHELD: 11,
    Outcome.VALIDATION_FAILED: 12,
    Outcome.NO_CODE_REPAIR: 13,
    Outcome.ABSTAINED: 14,
    Outcome.ENVIRONMENT_FAILED: 15,
}
"""``investigate``'s exit code per outcome of a run (``contracts.outcomes.RUN_OUTCOMES``)."""

EXIT_CODES: tuple[ExitCode, ...] = (
    ExitCode(OK, "ok", "all", "done; for `investigate`, the gate passed"),
    ExitCode(
        FAILURE,
        "failure",
        "all",
        "something outside the input failed (the broker, the database, a file that cannot be read), or a check "
        "found a problem: `verify` a finding, `rerun` a mismatch, `republish` an incident that did not move, "
        "`stack status` a service not running, `demo` and `bench` a guarantee that did not hold, `investigate` an "
        "input a service dead-lettered, `policy check-central` a section a service's reader refuses",
    ),
    ExitCode(
        USAGE,
        "usage",
        "all",
        "bad input: a flag, a bundle, a YAML or CSV file, a patch or workspace that cannot be read, a home where "
        "nothing has run yet, or (`demo`) a home already used; one line on stderr",
    ),
    ExitCode(REFUSED, "refused", "`guard`", "the patch guard refused the patch; the report says which check and why"),
    ExitCode(10, Outcome.REPAIR_VALIDATED, "`investigate`", "a repair was proposed and passed every validation step"),
    ExitCode(
        11, Outcome.REPAIR_WITHHELD, "`investigate`", "a cause was named, but no repair inside the policy's limits"
    ),
    ExitCode(12, Outcome.VALIDATION_FAILED, "`investigate`", "the proposed repair failed validation"),
    ExitCode(13, Outcome.NO_CODE_REPAIR, "`investigate`", "the cause is in the data: the owners to tell are named"),
    ExitCode(14, Outcome.ABSTAINED, "`investigate`", "the evidence does not single out one cause"),
    ExitCode(
        15, Outcome.ENVIRONMENT_FAILED, "`investigate`", "a revision's declared Python environment could not be built"
    ),
    ExitCode(INTERRUPTED, "interrupted", "all", "stopped by Ctrl-C (SIGINT)"),
)


def exit_code_lines(width: int = 100) -> list[str]:
    """The table as text, for ``--help``: code, name, commands, then the meaning wrapped under itself."""
    lines = []
    for c in EXIT_CODES:
        head = f"  {c.code:>3}  {c.name:18} {c.commands.replace('`', ''):12} "
        wrapped = textwrap.wrap(c.meaning.replace("`", ""), width - len(head)) or [""]
        lines.append(head + wrapped[0])
        lines += [" " * len(head) + more for more in wrapped[1:]]
    return lines
