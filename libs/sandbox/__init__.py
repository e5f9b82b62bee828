"""Run code ModelGuard did not write (a model repository's evaluation, tests and feature commands) inside
limits: an allow-listed interpreter without a shell, an environment built from nothing, CPU, memory,
wall-time, output and file-size limits, and, where the operating system allows it, no network and a
read-only view of the machine. docs/sandbox.md says what is enforced and what is only detected.

Import the submodules directly (``from libs.sandbox.run import run_sandboxed``).
"""
