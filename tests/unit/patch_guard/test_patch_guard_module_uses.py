"""What a module uses (names, attributes on values, imports), and what the allow-list of new code admits."""

from __future__ import annotations

import ast

import pytest
from pydantic import ValidationError

from libs.patch_guard.module_uses import Use, module_uses
from libs.patch_guard.new_code_allowlist import NewCodeAllowList
from libs.patch_guard.policy import load_central_policy


def uses(source: str) -> set[str]:
    return {use.describe() for use in module_uses(ast.parse(source))}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("len(x)", {"len", "x"}),
        ("import numpy as np\nnp.where(a, b, c)", {"import numpy", "numpy.where", "a", "b", "c"}),
        ("import numpy as np\nnp.random.default_rng(0)", {"import numpy", "numpy.random.default_rng"}),
        ("from os import getenv as g\ng('X')", {"from os import getenv", "os.getenv"}),
        ("import os\nrun = os.system\nrun('id')", {"import os", "os.system"}),
        ("import numpy as np\nv = getattr(np, 'where')", {"import numpy", "getattr", "numpy", "numpy.where"}),
        ("def f(frame):\n    return frame['a'].fillna(0).astype(float)", {".fillna", ".astype", "float"}),
        ("def f(text):\n    return ''.join(text.split())", {".join", ".split"}),
        ("from . import labels\nlabels.LABEL", {"from . import labels", ".LABEL"}),
        ("def f(x):\n    return x.__class__", {".__class__"}),
    ],
)
def test_uses(source: str, expected: set[str]) -> None:
    assert uses(source) == expected


def test_bindings_are_not_uses() -> None:
    source = (
        "def helper(value, scale=2):\n"
        "    total = value * scale\n"
        "    pairs = [(k, v) for k, v in enumerate(range(3))]\n"
        "    return total, pairs, (lambda item: item)(total)\n"
    )
    assert uses(source) == {"enumerate", "range"}


def test_the_module_s_own_attributes_are_not_uses_but_dunders_always_are() -> None:
    source = (
        "class Ratio:\n"
        "    columns = ('a', 'b')\n"
        "    def fit(self, frame):\n"
        "        self.median_ = frame.median()\n"
        "        return self\n"
        "    def transform(self, frame):\n"
        "        return self._scaled(frame[list(self.columns)]).fillna(self.median_)\n"
        "    def _scaled(self, frame):\n"
        "        return frame.__dict__\n"
    )
    assert uses(source) == {".median", ".fillna", "list", ".__dict__"}


def test_names_bound_elsewhere_in_the_hunks_are_local() -> None:
    tree = ast.parse("if months <= 0:\n    return_value = total / months")
    assert {use.describe() for use in module_uses(tree)} == {"months", "total"}
    assert module_uses(tree, outer_locals=frozenset({"months", "total"})) == {}


def test_a_conventional_alias_without_its_import_is_read_as_the_module() -> None:
    """A hunk read alone does not see ``import numpy as np``."""
    assert uses("np.where(a > 0, a, 0.0)") >= {"numpy.where"}


def test_an_import_rebinding_an_alias_changes_what_every_use_stands_for() -> None:
    assert "pandas.where" in uses("import pandas as np\nnp.where(a, b, c)")


@pytest.mark.parametrize(
    ("use", "admitted"),
    [
        (Use("name", "round"), True),
        (Use("name", "numpy.where"), True),
        (Use("name", "numpy.load"), False),
        (Use("name", "math.isfinite"), True),
        (Use("name", "math.os"), False),
        (Use("attribute", "fillna"), True),
        (Use("attribute", "dropna"), False),
        (Use("import", "math"), True),
        (Use("import", "numpy", "where"), True),
        (Use("import", "subprocess"), False),
        (Use("name", "eval"), False),
        (Use("name", "open"), False),
    ],
)
def test_what_the_central_allow_list_admits(use: Use, admitted: bool) -> None:
    assert load_central_policy().new_code.admits(use) is admitted


@pytest.mark.parametrize("entry", ["__import__", "numpy.__dict__", "os.system()", "", "a b"])
def test_the_allow_list_takes_plain_names_only(entry: str) -> None:
    with pytest.raises(ValidationError, match="not a plain"):
        NewCodeAllowList(module_names=(entry,))
