"""Run code ModelGuard did not write (a model repository's evaluation, predict, tests and feature commands)
where nothing is worth stealing: bubblewrap shows it only the system, the interpreter, its revision and its
declared inputs, with no network, as an unprivileged uid, in a cgroup for processes, memory and CPU where the
machine has one, under per-process, wall-time and output limits. Without bubblewrap nothing runs unless the
central policy allows unconfined runs. docs/sandbox.md says what is enforced, detected and not covered.

Import the submodules directly (``from libs.sandbox.run import run_sandboxed``).
"""
