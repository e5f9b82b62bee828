"""Text in code that points outside the workspace (a URL, a home or absolute path, ``..``, a credentials
file) or names a label column.

String expressions are read after folding what Python would fold or build from constants: implicit
concatenation (the parser's), ``"a" + "b"``, ``"%s" % x`` left as it is, f-strings with their constant
parts and a placeholder for each field, and bytes as Latin-1, so ``"~" + "/.netrc"`` and
``f"{root}/../x"`` are read whole.
"""

from __future__ import annotations

import ast
import re

URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://|^file:", re.IGNORECASE)
HOME_PATH = re.compile(r"^~[A-Za-z0-9_.-]*(?:[/\\]|$)")
ABSOLUTE_PATH = re.compile(r"^(?:/[A-Za-z0-9_.~-]|[A-Za-z]:[\\/]|\\\\)")
PARENT_COMPONENT = re.compile(r"(?:^|[/\\])\.\.(?:[/\\]|$)")
CREDENTIAL_FILES = re.compile(
    r"\.netrc|_netrc|\.pgpass|\.git-credentials|\.pypirc|\.npmrc|\.ssh\b|id_rsa|id_ed25519|\.aws\b|\.kube\b"
    r"|\.docker\b|\.gnupg\b|/etc/passwd|/etc/shadow|/proc/",
    re.IGNORECASE,
)
FIELD_PLACEHOLDER = "\x00"


def folded_string(node: ast.expr) -> str | None:
    """The text of a string (or bytes) expression built from constants, or None."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return None
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else FIELD_PLACEHOLDER
            for part in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded_string(node.left), folded_string(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def outside_reference(text: str) -> str | None:
    """What in ``text`` points outside the workspace, described, or None."""
    if URL.search(text):
        return "a URL"
    if CREDENTIAL_FILES.search(text):
        return "a credentials file"
    if HOME_PATH.match(text):
        return "a path in a home directory"
    if ABSOLUTE_PATH.match(text):
        return "an absolute path"
    if PARENT_COMPONENT.search(text):
        return "a '..' path component"
    return None


def names_label(text: str, labels: tuple[str, ...]) -> str | None:
    """The label column ``text`` names as a word (compared without case: ``"churned"``, ``"y.churned"``,
    not ``"churned_before"``), or None."""
    return next((label for label in labels if label_word(label).search(text)), None)


def label_word(label: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(label)}(?![A-Za-z0-9_])", re.IGNORECASE)
