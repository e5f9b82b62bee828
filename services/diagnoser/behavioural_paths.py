"""Which changed paths can change what the model does: tests and documentation cannot."""

from __future__ import annotations

from pathlib import PurePosixPath

NON_BEHAVIOURAL_SUFFIXES = frozenset({".md", ".rst", ".txt"})


def is_test_or_documentation(path: str) -> bool:
    """A documentation file, a file under a ``tests`` folder, a ``test_*`` module or a ``conftest.py``."""
    pure = PurePosixPath(path)
    return (
        pure.suffix in NON_BEHAVIOURAL_SUFFIXES
        or "tests" in pure.parts[:-1]
        or pure.name.startswith("test_")
        or pure.name == "conftest.py"
    )
