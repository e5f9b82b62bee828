"""Constructs a repair may never add, whatever the module already uses; which statements a patch changes."""

from __future__ import annotations

import ast

import pytest

from libs.patch_guard.always_refused import new_refused, refused_constructs
from libs.patch_guard.changed_statements import ChangedStatements
from libs.patch_guard.identifier_scripts import identifier_problem, identifiers, scripts, tree_identifiers

LABELS = ("churned",)


def categories(source: str) -> set[str]:
    return {finding.category for finding, _ in refused_constructs(ast.parse(source), LABELS)}


@pytest.mark.parametrize(
    ("source", "category"),
    [
        ("import json\njson.dumps = str", "rebinding"),
        ("import sys\nsys.stdout = open('x')", "rebinding"),
        ("import os\nos.environ['HOME'] = '/'", "rebinding"),
        ("import os\ndel os.environ['CI']", "rebinding"),
        ("__builtins__['len'] = max", "rebinding"),
        ("import builtins as b\nb.print = repr", "rebinding"),
        ("import json\nsetattr(json, 'dumps', str)", "rebinding"),
        ("print = repr", "rebinding"),
        ("from sklearn.metrics import f1_score\n\ndef f1_score(a, b):\n    return 1.0", "rebinding"),
        ("from sklearn.linear_model import LogisticRegression as L\nL.predict = lambda self, x: x", "rebinding"),
        ("def fake(self, x):\n    return x\n\nmodel.predict = fake", "rebinding"),
        ("def __getattr__(name):\n    return 0.99", "rebinding"),
        ("import json\n\ndef f():\n    global json\n    json = None", "rebinding"),
        ("from pkg.columns import COLUMNS\nCOLUMNS.append('support_calls')", "rebinding"),
        ("import sklearn\nsklearn.config.update(x=1)", "rebinding"),
        ("raise SystemExit(0)", "exit"),
        ("import sys as s\ns.exit(0)", "exit"),
        ("from os import _exit\n_exit(0)", "exit"),
        ("exit()", "exit"),
        ("def run(module):\n    module.exit(0)", "exit"),
        ("import sys\nif '--eval' in sys.argv:\n    pass", "outside_input"),
        ("from os import getenv\ngetenv('CI')", "outside_input"),
        ("import posix\nposix.getenv('CI')", "outside_input"),
        ("from pathlib import Path\nPath.home()", "outside_input"),
        ("def f(module):\n    return module.environ", "outside_input"),
        ("import time\ntime.sleep(1)", "blocking"),
        ("from time import sleep as pause\npause(1)", "blocking"),
        ("import threading", "blocking"),
        ("input()", "blocking"),
        ("while True:\n    pass", "unbounded_loop"),
        ("while x > 0:\n    x = x - 1", "unbounded_loop"),
        ("import itertools\nfor i in itertools.count():\n    pass", "unbounded_loop"),
        ("for line in iter(read, ''):\n    pass", "unbounded_loop"),
        ("def f(n):\n    return f(n - 1)", "unbounded_loop"),
        ("class A:\n    def f(self, n):\n        return self.f(n)", "unbounded_loop"),
        ("print('x')", "output"),
        ("import logging\nlogging.basicConfig(filename='x.log')", "output"),
        ("import sys\nsys.stderr.write('x')", "output"),
        ("read_csv('https://example.com/x.csv')", "outside_reference"),
        ("open('~/.netrc')", "outside_reference"),
        ("open(home + '/.aws/credentials')", "outside_reference"),
        ("open('/etc/hosts')", "outside_reference"),
        ("open(f'{root}/../tests/test_model.py')", "outside_reference"),
        ("frame['churned']", "label_reference"),
        ("frame['chur' + 'ned']", "label_reference"),
        ("frame.churned", "label_reference"),
        ("frame.assign(churned=1)", "label_reference"),
    ],
)
def test_refused(source: str, category: str) -> None:
    assert category in categories(source)


@pytest.mark.parametrize(
    "source",
    [
        "def f(frame):\n    frame['a'] = frame['a'].fillna(0)\n    return frame",
        "class T:\n    def fit(self, x):\n        self.median_ = x.median()\n        setattr(self, 'n_', 1)\n",
        "cache = {}\ncache['a'] = 1",
        "for row in rows:\n    total = total + row",
        "def f():\n    '''See https://example.com/docs and ~/notes.'''\n    return 1",
        "parts = text.split('/')\nratio = 'a/b'",
        "frame['churned_before']\nframe['churn']",
        "import numpy as np\nrng = np.random.default_rng(0)",
        "def f(months):\n    return g(months)",
        "def transform(self, x):\n    return super().transform(x)",
        "import time\nstarted = time.perf_counter()",
        "COLUMNS = ['a']\nCOLUMNS.append('b')\ndef f(rows):\n    rows.sort()\n    out = []\n    out.append(1)",
    ],
)
def test_not_refused(source: str) -> None:
    assert categories(source) == set()


def refused_after(before: str, after: str, added: set[int]) -> list[str]:
    tree = ast.parse(after)
    found = refused_constructs(tree, LABELS)
    old = [finding for finding, _ in refused_constructs(ast.parse(before), LABELS)]
    return [
        f"{finding.line}: {finding.description}" for finding in new_refused(old, found, ChangedStatements(tree, added))
    ]


def test_only_changed_statements_and_new_occurrences_count() -> None:
    before = "import os\nA = os.getenv('A')\n"
    assert refused_after(before, before + "B = 1\n", {3}) == []
    assert refused_after(before, "import os\nA = os.getenv('TOKEN')\n", {2}) == ["2: os.getenv"]
    assert refused_after(before, before + "B = os.getenv('B')\n", {3}) == ["3: os.getenv"]


def test_a_call_is_changed_when_only_its_argument_line_is() -> None:
    after = "import os\nA = os.getenv(\n    'TOKEN'\n)\n"
    assert refused_after("import os\nA = os.getenv(\n    'HOME'\n)\n", after, {3}) == ["2: os.getenv"]


def test_a_loop_is_changed_by_its_header_not_its_body() -> None:
    before = "jobs = [1]\nwhile jobs:\n    jobs.pop()\n"
    assert refused_after(before, "jobs = [1]\nwhile jobs:\n    jobs.pop(0)\n", {3}) == []
    assert refused_after(before, "jobs = [1]\nwhile jobs or True:\n    jobs.pop()\n", {2}) == ["2: while jobs or True"]


def test_a_name_redirected_by_the_patch_counts_on_an_unchanged_line() -> None:
    """``wait(5)`` is unchanged, but the patch makes ``wait`` stand for ``time.sleep``."""
    before = "from helpers import wait\nwait(5)\n"
    after = "from helpers import wait\nfrom time import sleep as wait\nwait(5)\n"
    assert refused_after(before, after, {2}) == ["2: from time import sleep", "3: time.sleep"]


@pytest.mark.parametrize(
    ("identifier", "found"),
    [
        ("months", ["LATIN"]),
        ("_2", []),
        ("m\u043enths", ["LATIN", "CYRILLIC"]),
        ("t\u03bftal", ["LATIN", "GREEK"]),
        ("\uff45\uff56\uff41\uff4c", ["LATIN"]),
        ("a\u00f1o_2", ["LATIN"]),
        ("\u0434\u0430\u043d\u043d\u044b\u0435", ["CYRILLIC"]),
    ],
)
def test_scripts(identifier: str, found: list[str]) -> None:
    assert scripts(identifier) == found


def test_identifier_problems() -> None:
    assert identifier_problem("months", frozenset()) is None
    assert "mixes the scripts LATIN and CYRILLIC" in (identifier_problem("m\u043enths", frozenset()) or "")
    assert "did not use before" in (identifier_problem("a\u00f1o", frozenset()) or "")
    assert identifier_problem("a\u00f1o", frozenset({"a\u00f1o"})) is None
    assert identifier_problem("m\u043enths", frozenset({"m\u043enths"})) is not None, "mixed scripts: always"


def test_identifiers_inside_f_strings_are_read_from_the_tree() -> None:
    """Before Python 3.12 an f-string is one token; its names are still in the syntax tree."""
    source = 'label = f"{m\u043enths:.1f} months"\n'
    assert "m\u043enths" in {name for _, name in tree_identifiers(ast.parse(source))}
    assert {name for _, name in identifiers("import os as o\n")} == {"import", "os", "as", "o"}
