"""Forbidden constructs on the syntax tree, with alias resolution, never by substring."""

from __future__ import annotations

import ast

import pytest

from libs.patch_guard.ast_rules import forbidden_constructs, new_constructs
from libs.patch_guard.constructs import CATEGORIES
from libs.patch_guard.fragments import scan_lines


def categories(source: str) -> set[str]:
    return {finding.category for finding in forbidden_constructs(ast.parse(source), CATEGORIES)}


@pytest.mark.parametrize(
    ("source", "category"),
    [
        ("eval('1')", "code_execution"),
        ("run = eval\nrun('1')", "code_execution"),
        ("from builtins import exec as e\ne('x')", "code_execution"),
        ("import builtins as b\nb.compile('1', 'f', 'eval')", "code_execution"),
        ("f = lambda e=exec: e", "code_execution"),
        ("import importlib\nimportlib.import_module('o' + 's')", "code_execution"),
        ("\uff45\uff56\uff41\uff4c('1')", "code_execution"),
        ("import subprocess", "process"),
        ("from subprocess import run as go", "process"),
        ("import os as o\no.system('id')", "process"),
        ("import os\na = os\nb = a\nb.popen('id')", "process"),
        ("import os\ngetattr(os, 'execv')('/bin/sh', [])", "process"),
        ("import posix\nposix.system('id')", "process"),
        ("import logging\nlogging.os.system('id')", "process"),
        ("import pty", "process"),
        ("def run(module):\n    module.system('id')", "process"),
        ("import os\nrun(os)", "interpreter_state"),
        ("import socket", "network"),
        ("import http.client", "network"),
        ("import requests as r\nr.get('https://x')", "network"),
        ("import ctypes", "native_code"),
        ("import pickle\npickle.loads(b'')", "deserialisation"),
        ("import marshal", "deserialisation"),
        ("import numpy as np\nnp.load('x', allow_pickle=True)", "deserialisation"),
        ("open('x', 'w')", "file_write"),
        ("open('x', mode='a+')", "file_write"),
        ("mode = 'w'\nopen('x', mode)", "file_write"),
        ("import io\nio.open('x', 'wb')", "file_write"),
        ("from pathlib import Path\nPath('x').write_text('y')", "file_write"),
        ("p.unlink()", "file_write"),
        ("p.open('w')", "file_write"),
        ("import shutil\nshutil.rmtree('x')", "file_write"),
        ("import os\nos.remove('x')", "file_write"),
        ("df.to_csv('out.csv')", "file_write"),
        ("getattr(__builtins__, 'ev' + 'al')", "interpreter_state"),
        ("getattr(obj, name)", "interpreter_state"),
        ("globals()['x'] = 1", "interpreter_state"),
        ("vars(obj)", "interpreter_state"),
        ("setattr(obj, 'x', 1)", "interpreter_state"),
        ("().__class__.__base__.__subclasses__()", "interpreter_state"),
        ("f.__globals__['os']", "interpreter_state"),
        ("import sys\nsys.modules['os']", "interpreter_state"),
        ("from os import *", "interpreter_state"),
        ("'{0.__globals__}'.format(f)", "interpreter_state"),
        ("__loader__.load_module('subprocess')", "interpreter_state"),
        ("import os.path as p\np.os.system('id')", "process"),
        ("import os\nos.environ['TOKEN']", "interpreter_state"),
    ],
)
def test_forbidden(source: str, category: str) -> None:
    assert category in categories(source)


@pytest.mark.parametrize(
    "source",
    [
        "x = 1  # eval(x), exec, subprocess, os.system: only a comment",
        "message = 'import subprocess; eval(x); open(p, \"w\")'",
        "import re\npattern = re.compile('x')",
        "import os\npath = os.path.join('a', 'b')",
        "with open('x') as handle:\n    handle.read()",
        "with open('x', 'rb') as handle:\n    handle.read()",
        "model.eval()",
        "text = df.to_csv(index=False)",
        "df.rename(columns={'a': 'b'})\nname = text.replace('a', 'b')",
        "def compile(x):\n    return x\n\ncompile(1)",
        "def f(requests):\n    return requests.get('x')",
        "value = getattr(obj, 'mean', None)",
        "from PIL import Image\nImage.open('x.png')",
        "code = row['code']\nsignal = code.upper()",
        "label = '{0.name}: {1:.2f}'.format(row, score)",
    ],
)
def test_not_forbidden(source: str) -> None:
    assert categories(source) == set()


def test_only_new_constructs_count() -> None:
    before = forbidden_constructs(ast.parse("import os as o\no.system('a')\n"), CATEGORIES)
    moved = forbidden_constructs(ast.parse("import os as o\n\n\no.system('a')\n"), CATEGORIES)
    twice = forbidden_constructs(ast.parse("import os as o\no.system('a')\no.system('b')\n"), CATEGORIES)
    assert new_constructs(before, moved) == []
    assert [(finding.description, finding.line) for finding in new_constructs(before, twice)] == [("os.system", 3)]


def test_categories_can_be_chosen() -> None:
    assert forbidden_constructs(ast.parse("import socket"), ["process"]) == []


def test_hunks_alone_are_read_line_by_line_when_they_must() -> None:
    scan = scan_lines([(10, "    if x <= 0:"), (11, "        return 0.0"), (12, "    y = eval(z)")], CATEGORIES)
    assert [(finding.description, finding.line) for finding in scan.findings] == [("eval", 12)]
    assert scan_lines([(5, '    "a": eval(x),')], CATEGORIES).findings[0].description == "eval"
    assert scan_lines([(5, "    else:"), (6, "        exec(z)")], CATEGORIES).findings[0].description == "exec"


def test_hunks_alone_refuse_what_they_cannot_read() -> None:
    """A run that opens or closes a triple-quoted string reads differently alone than in its file."""
    scan = scan_lines([(5, '"""'), (6, "import subprocess"), (7, '"""')], CATEGORIES)
    assert scan.unverifiable and not scan.findings
    assert scan_lines([(5, "x = (1 +")], CATEGORIES).unverifiable


@pytest.mark.parametrize(
    "source",
    [
        "from pathlib import Path\nPath('data/eval.csv').rename('data/train.csv')",
        "from pathlib import Path\ndef f(path: Path):\n    path.replace(path.parent / 'x.csv')",
        "import pathlib as p\nROOT = p.Path('.')\n(ROOT / 'tests').rename('gone')",
        "from pathlib import Path\nclass L:\n    def __init__(self):\n        self.root = Path('.')\n"
        "    def f(self):\n        self.root.with_suffix('.bak').rename('x')",
        "from pathlib import Path\nfor item in Path('.').glob('*.csv'):\n    item.rename(item.name + '.old')",
    ],
)
def test_moving_a_file_through_a_path_is_a_file_write(source: str) -> None:
    assert "file_write" in categories(source)


@pytest.mark.parametrize(
    "source",
    [
        "frame = frame.rename(columns={'a': 'b'})",
        "def f(s):\n    return s.replace(0, float('nan')).rename('ratio')",
        "from pathlib import Path\nname = str(Path('x')).replace('/', '_')",
        "import numpy as np\nratio = (a / b).rename('ratio')",
    ],
)
def test_renaming_a_series_or_a_string_is_not(source: str) -> None:
    assert categories(source) == set()
