"""The forbidden constructs, by category: what a repair may never add to a Python file.

Names are fully qualified after alias resolution (``import os as o; o.system`` is ``os.system``;
``from builtins import eval as e`` is ``eval``). A name is forbidden when it equals an entry or lies
below one (``subprocess`` forbids ``subprocess.run``). The central policy chooses which categories apply.
"""

from __future__ import annotations

from typing import Literal, get_args

from libs.patch_guard.dotted_names import is_or_is_under

Category = Literal[
    "code_execution", "process", "network", "native_code", "deserialisation", "file_write", "interpreter_state"
]


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


CATEGORIES: tuple[Category, ...] = get_args(Category)

FORBIDDEN_NAMES: dict[Category, frozenset[str]] = {
    "code_execution": _names(
        "eval exec compile __import__ breakpoint execfile importlib runpy code codeop imp pkgutil pydoc.locate"
        " pandas.eval numexpr typing.get_type_hints types.CodeType types.FunctionType"
    ),
    "process": _names(
        "subprocess pty multiprocessing concurrent.futures.ProcessPoolExecutor signal os.system os.popen os.fork"
        " os.forkpty os.kill os.killpg os.abort os.startfile asyncio.subprocess asyncio.create_subprocess_exec"
        " asyncio.create_subprocess_shell platform.popen pipes commands pydoc"
    ),
    "network": _names(
        "socket socketserver ssl select selectors asyncio.open_connection asyncio.start_server urllib.request"
        " urllib2 urllib3 http.client http.server httplib ftplib smtplib poplib imaplib nntplib telnetlib xmlrpc"
        " webbrowser requests httpx aiohttp websocket websockets paramiko grpc pycurl"
    ),
    "native_code": _names("ctypes _ctypes cffi mmap"),
    "deserialisation": _names(
        "pickle _pickle cPickle marshal shelve dill cloudpickle jsonpickle joblib.load numpy.load"
        " pandas.read_pickle torch.load yaml.load yaml.load_all yaml.unsafe_load yaml.unsafe_load_all yaml.full_load"
    ),
    "file_write": _names(
        "shutil tempfile os.remove os.unlink os.rmdir os.removedirs os.rename os.renames os.replace os.chmod"
        " os.lchmod os.fchmod os.chown os.lchown os.fchown os.link os.symlink os.truncate os.ftruncate os.write"
        " os.writev os.pwrite os.pwritev os.open os.mkdir os.makedirs os.mkfifo os.mknod os.utime os.chflags"
        " os.sendfile os.copy_file_range numpy.save numpy.savez numpy.savez_compressed numpy.savetxt joblib.dump"
        " logging.FileHandler logging.handlers logging.config"
    ),
    "interpreter_state": _names(
        "globals locals vars setattr delattr __builtins__ __loader__ __spec__ builtins sys.modules sys.path"
        " sys.meta_path sys.path_hooks sys.path_importer_cache sys.settrace sys.setprofile sys.addaudithook"
        " sys._getframe sys.excepthook inspect.currentframe inspect.stack inspect.trace inspect.getouterframes"
        " inspect.getinnerframes gc operator.attrgetter operator.methodcaller atexit os.environ os.environb"
        " os.putenv os.unsetenv string.Formatter"
    ),
}
"""Qualified names (modules, functions, attributes) whose use is forbidden, by category."""

FORBIDDEN_PREFIXES: dict[Category, tuple[str, ...]] = {
    "process": ("os.exec", "os.spawn", "os.posix_spawn"),
}
"""Families of names: ``os.execv``, ``os.spawnlp``, ``os.posix_spawnp``..."""

ESCAPE_ATTRIBUTES = _names(
    "__dict__ __class__ __bases__ __base__ __mro__ __subclasses__ __globals__ __code__ __closure__"
    " __builtins__ __getattribute__ __loader__ __spec__ __import__ __func__ __self__ __defaults__"
    " __kwdefaults__ __reduce__ __reduce_ex__ __setattr__ __delattr__ __traceback__ f_globals f_locals"
    " f_builtins f_back f_code gi_frame gi_code cr_frame ag_frame tb_frame tb_next co_code"
)
"""Attributes that reach interpreter internals from any object (``().__class__.__bases__[0]...``)."""

DANGEROUS_ATTRIBUTES: dict[str, Category] = {
    **dict.fromkeys(
        _names(
            "system popen Popen check_output check_call getoutput getstatusoutput fork forkpty posix_spawn"
            " posix_spawnp execl execle execlp execlpe execv execve execvp execvpe spawnl spawnle spawnlp"
            " spawnlpe spawnv spawnve spawnvp spawnvpe"
        ),
        "process",
    ),
    **dict.fromkeys(_names("urlopen create_connection"), "network"),
    **dict.fromkeys(_names("import_module"), "code_execution"),
}
"""Attribute names forbidden on any object: a module can reach code under any name (``def f(m):
m.system(...)`` called with ``os``), where alias resolution cannot follow it."""

OPENERS = frozenset({"open", "io.open", "codecs.open", "os.fdopen", "gzip.open", "bz2.open", "lzma.open"})
"""Callables that open a file, with the position of their mode argument (always the second)."""

WRITE_METHODS = _names(
    "write_text write_bytes unlink rmdir mkdir touch chmod lchmod symlink_to hardlink_to link_to tofile"
    " to_pickle to_parquet to_excel to_hdf to_feather to_orc to_stata to_sql savefig rmtree"
)
"""Methods that write or delete files whatever object they are called on (``Path``, ``DataFrame``...)."""

PATH_WRITE_METHODS = frozenset({"to_csv", "to_json"})
"""Methods that write a file only when given a destination (``df.to_csv()`` returns text)."""

PATH_WRITE_KEYWORDS = frozenset({"path_or_buf", "path"})

MODULE_ALIASES = {"posix": "os", "nt": "os", "_io": "io", "np": "numpy", "pd": "pandas"}
"""Modules that are another module under a different name (``posix.system`` is ``os.system``); ``np`` and
``pd`` are here for hunks checked without their imports."""


def forbidden_category(qualified: str) -> Category | None:
    """The category of a forbidden qualified name, or None."""
    for category, names in FORBIDDEN_NAMES.items():
        if is_or_is_under(qualified, names):
            return category
    for category, prefixes in FORBIDDEN_PREFIXES.items():
        if qualified.startswith(prefixes):
            return category
    return None


def normalised(qualified: str) -> str:
    """``builtins.eval`` is ``eval``; ``posix.system`` is ``os.system``."""
    head, dot, rest = qualified.partition(".")
    if head == "builtins" and dot:
        return normalised(rest)
    if head in MODULE_ALIASES:
        return MODULE_ALIASES[head] + dot + rest
    return qualified
