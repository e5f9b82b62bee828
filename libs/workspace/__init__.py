"""Workspace helpers: build a scenario's model repository, snapshot and extract commits, run the
workspace's own commands in a scrubbed subprocess and check the data they produce.

Import the submodules directly (``from libs.workspace.runner import run_command``); this package
imports nothing on its own.
"""
