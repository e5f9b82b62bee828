"""What a repair may never add, whatever the module already uses: the names, by category.

Names are qualified after alias resolution, like :mod:`libs.patch_guard.constructs` (``from os import getenv
as g`` is ``os.getenv``); a name is refused when it equals an entry or lies below one (``threading``
refuses ``threading.Timer``). Attribute names in :data:`REFUSED_ATTRIBUTES` are refused on any object,
because a module handed around as a value travels under a name resolution cannot follow.
"""

from __future__ import annotations

from typing import Literal

from libs.patch_guard.dotted_names import is_or_is_under

RefusedCategory = Literal[
    "rebinding",
    "exit",
    "outside_input",
    "blocking",
    "unbounded_loop",
    "output",
    "outside_reference",
    "label_reference",
    "identifier",
    "config_text",
]


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


REFUSED_NAMES: dict[RefusedCategory, frozenset[str]] = {
    "exit": _names(
        "SystemExit KeyboardInterrupt GeneratorExit BaseException exit quit sys.exit os._exit os.abort os.kill"
        " _thread.interrupt_main"
    ),
    "outside_input": _names(
        "sys.argv sys.orig_argv sys.stdin sys.__stdin__ os.environ os.environb os.getenv os.getenvb os.putenv"
        " os.unsetenv os.getcwd os.getcwdb os.getlogin os.uname os.path.expanduser os.path.expandvars"
        " pathlib.Path.home pathlib.Path.cwd pathlib.Path.expanduser getpass argparse __main__ platform.node"
        " socket.gethostname"
    ),
    "blocking": _names(
        "input time.sleep asyncio threading _thread signal sched selectors select concurrent.futures"
        " multiprocessing os.wait os.waitpid os.wait3 os.wait4 os.waitid sys.setrecursionlimit"
        " sys.setswitchinterval faulthandler resource"
    ),
    "unbounded_loop": _names("itertools.count itertools.cycle itertools.repeat"),
    "output": _names(
        "print pprint sys.stdout sys.stderr sys.__stdout__ sys.__stderr__ sys.displayhook logging.basicConfig"
        " logging.FileHandler logging.StreamHandler logging.handlers logging.config contextlib.redirect_stdout"
        " contextlib.redirect_stderr"
    ),
}
"""Qualified names a repair may never add a use of, by category."""

REFUSED_ATTRIBUTES: dict[str, RefusedCategory] = {
    **dict.fromkeys(_names("exit _exit"), "exit"),
    **dict.fromkeys(
        _names("argv orig_argv environ environb getenv getenvb putenv expanduser expandvars parse_args"),
        "outside_input",
    ),
    **dict.fromkeys(_names("parse_known_args getcwd"), "outside_input"),
    **dict.fromkeys(_names("sleep"), "blocking"),
    **dict.fromkeys(_names("stdout stderr __stdout__ __stderr__ basicConfig addHandler"), "output"),
}
"""Attribute names refused on any object (``module.getenv`` where ``module`` is ``os`` passed as a value)."""


def refused_category(qualified: str) -> RefusedCategory | None:
    """The category of a refused qualified name, or None."""
    for category, names in REFUSED_NAMES.items():
        if is_or_is_under(qualified, names):
            return category
    return None
