"""Trials: the evaluations the diagnosis runs (a tree on a data window), in the sandbox, cached by content and
bounded by the central policy's budget, independent ones in parallel."""
