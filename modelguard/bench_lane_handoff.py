"""``python -m modelguard.bench_lane_handoff``: what a command's turn costs ModelGuard when commands queue for lanes,
as the diagnoser's do (``libs/workspace/command_lanes.py``). Six CPU-bound commands are started at once from six
threads sharing two lanes, through the services' own path (``run_command``: the sandbox, its slots made ahead); the
figure is the hand-off: from one command's process being reaped to the next one's on the same lane being let go, the
time its lane stood idle while ModelGuard prepared the next command or checked the last. Median over the rounds."""

from __future__ import annotations

import argparse
import contextvars
import statistics
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from libs.sandbox import spare_slots
from libs.workspace.command_lanes import sharing_lanes
from libs.workspace.runner import CommandResult, run_command

LANES = 2
COMMANDS = 6
ROUNDS = 12
BUSY = "total = 0\nfor number in range(2_000_000):\n    total += number\n"

Ran = tuple[float, float]
"""When a command's process ran: let go, reaped (seconds since the epoch)."""


def hand_offs(ran: Sequence[Ran], lanes: int) -> list[float]:
    """Seconds each lane stood idle between two commands: in the order the commands were let go, each of the first
    ``lanes`` takes a lane of its own, and each later one the lane whose command was reaped last before it was let
    go (else the one reaped first: it could only start after one was)."""
    free_at: list[float] = []
    idle: list[float] = []
    for let_go, reaped in sorted(ran):
        if len(free_at) < lanes:
            free_at.append(reaped)
            continue
        before = [at for at in free_at if at <= let_go]
        lane = max(before) if before else min(free_at)
        idle.append(max(0.0, let_go - lane))
        free_at[free_at.index(lane)] = reaped
    return idle


def _round(workspace: Path) -> list[float]:
    results: list[CommandResult] = []
    lock = threading.Lock()

    def command() -> None:
        result = run_command(["python", "-c", BUSY], workspace, 120)
        with lock:
            results.append(result)

    with sharing_lanes(LANES):
        threads = [threading.Thread(target=contextvars.copy_context().run, args=(command,)) for _ in range(COMMANDS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    ran = [result.ran for result in results if result.succeeded and result.ran is not None]
    if len(ran) != COMMANDS:
        raise RuntimeError(f"{len(ran)} of {COMMANDS} commands ran and said when: {[r.stderr for r in results]}")
    return hand_offs(ran, LANES)


def measure(rounds: int = ROUNDS) -> list[float]:
    """The hand-offs of ``rounds`` rounds (after one to warm up), in seconds, with slots made ahead as a service
    makes them."""
    spare_slots.keep_spares()
    try:
        with tempfile.TemporaryDirectory(prefix="modelguard-lanes-") as folder:
            _round(Path(folder))
            return [gap for _ in range(rounds) for gap in _round(Path(folder))]
    finally:
        spare_slots.close_spares()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modelguard.bench_lane_handoff", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds (default %(default)s)")
    options = parser.parse_args(argv)
    gaps = sorted(measure(options.rounds))
    print(
        f"lane hand-off ({COMMANDS} commands on {LANES} lanes, {options.rounds} rounds): "
        f"p50 {statistics.median(gaps) * 1e3:.1f} ms, p90 {gaps[int(len(gaps) * 0.9)] * 1e3:.1f} ms "
        f"over {len(gaps)} hand-offs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
