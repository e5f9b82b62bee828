"""Each evaluation file split once per process: the features file a workspace's ``predict`` reads and the labels
ModelGuard keeps, found again by the sha256 of the file's bytes and the label column.

One incident evaluates the same window several times (the detector the base and the head, the diagnoser its
counterfactual, the validator the repair), and a model's incidents share their windows until its data moves on.
Splitting 1,600 rows costs about 3 ms alone and 4-10 ms beside running commands, each time before the command can
start.

What makes sharing safe:
- a command only reads its features: the file is an input, mounted read-only (``libs/sandbox/staging.py``), so one
  file serves any number of commands, at once too;
- each split has a folder of its own (0755, the file 0644, as a split made for one command had): a command given
  one window's features sees no other window's;
- a split in use is never removed: every user holds a lease until its command is done; splits nobody holds are
  removed oldest first beyond ``CAPACITY`` splits or ``BUDGET_BYTES`` of features;
- the key is the bytes read, and the split is made from those same bytes, so a file changed in between is a new
  key, never a stale split.

An evaluation file over ``CACHED_BYTES_MAX`` is split into a folder of its own for the one command and removed after
it. A split that fails is not kept: every caller waiting for it gets its error, and the next caller tries again.
The folders are removed when the process exits; a forked child starts with none and a lock of its own, and never
removes its parent's. A SIGKILLed process leaves them in the temporary folder, named for it (`process_folders`): the
next process that splits removes them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from libs.process_folders import own_prefix, remove_ended
from libs.referee.held_out import HeldLabels, HeldOutError, read_evaluation, split_features

FEATURES = "features.csv"
CAPACITY = 16
"""Splits kept that no command holds."""
BUDGET_BYTES = 256 * 1024 * 1024
"""Features kept that no command holds, in bytes of their evaluation files."""
CACHED_BYTES_MAX = BUDGET_BYTES // 4
"""An evaluation file larger than this is split for its one command, never kept."""

Key = tuple[str, str]
KEPT, ONE_COMMAND = "held-out", "features"
"""The kinds of this module's temporary folders (`process_folders`): the splits kept, a split for one command."""


@dataclass(eq=False)
class _Split:
    folder: Path
    size: int
    ready: threading.Event = field(default_factory=threading.Event)
    labels: HeldLabels | None = None
    error: BaseException | None = None
    leases: int = 0


class HeldOutSplits:
    def __init__(
        self, capacity: int = CAPACITY, budget_bytes: int = BUDGET_BYTES, cached_bytes_max: int = CACHED_BYTES_MAX
    ) -> None:
        self.capacity = capacity
        self.budget_bytes = budget_bytes
        self.cached_bytes_max = cached_bytes_max
        self._guard = threading.Lock()
        self._splits: OrderedDict[Key, _Split] = OrderedDict()
        self._root: Path | None = None
        _EVERY.add(self)

    def _forget(self) -> None:
        """In a forked child: start empty, with a lock of its own (another thread may have held the parent's at the
        fork, and no thread of the child would ever release it); the folders are the parent's."""
        self._guard = threading.Lock()
        self._splits = OrderedDict()
        self._root = None

    @contextmanager
    def features(self, evaluation_csv: Path, label: str) -> Iterator[tuple[Path, HeldLabels]]:
        """The features file of ``evaluation_csv`` without its ``label`` column (``held_out.write_features``) and
        the labels kept back, held until the block ends. Raises HeldOutError when the rows cannot be split."""
        data = read_evaluation(evaluation_csv)
        if len(data) > self.cached_bytes_max:
            _remove_ended_in(tempfile.gettempdir())
            with tempfile.TemporaryDirectory(prefix=own_prefix(ONE_COMMAND)) as folder:
                Path(folder).chmod(0o755)  # the features are no secret from the workspace; the labels stay here
                features = Path(folder) / FEATURES
                yield features, split_features(data, evaluation_csv.name, label, features)
            return
        key = (hashlib.sha256(data).hexdigest(), label)
        split, mine = self._lease(key, len(data))
        try:
            if mine:
                self._make(key, split, data, evaluation_csv.name, label)
            split.ready.wait()
            if split.error is not None:
                raise _again(split.error)
            assert split.labels is not None
            yield split.folder / FEATURES, split.labels
        finally:
            self._release(split)

    def kept(self) -> int:
        """How many splits this process keeps (held or not)."""
        with self._guard:
            return len(self._splits)

    def _lease(self, key: Key, size: int) -> tuple[_Split, bool]:
        with self._guard:
            split = self._splits.get(key)
            mine = split is None
            if split is None:
                split = self._splits[key] = _Split(Path(tempfile.mkdtemp(prefix="window-", dir=self._folder())), size)
            else:
                self._splits.move_to_end(key)
            split.leases += 1
            return split, mine

    def _make(self, key: Key, split: _Split, data: bytes, name: str, label: str) -> None:
        try:
            split.folder.chmod(0o755)  # the features are no secret from the workspace; the labels stay here
            split.labels = split_features(data, name, label, split.folder / FEATURES)
        except BaseException as error:
            split.error = error
            with self._guard:
                if self._splits.get(key) is split:
                    del self._splits[key]
            shutil.rmtree(split.folder, ignore_errors=True)
            raise
        finally:
            split.ready.set()

    def _release(self, split: _Split) -> None:
        with self._guard:
            split.leases -= 1
            unheld = [(k, s) for k, s in self._splits.items() if s.leases == 0 and s.ready.is_set()]
            count, size = len(self._splits), sum(s.size for s in self._splits.values())
            gone: list[_Split] = []
            for key, old in unheld:  # oldest first
                if count <= self.capacity and size <= self.budget_bytes:
                    break
                del self._splits[key]
                gone.append(old)
                count, size = count - 1, size - old.size
        for old in gone:
            shutil.rmtree(old.folder, ignore_errors=True)

    def _folder(self) -> Path:
        if self._root is None:
            _remove_ended_in(tempfile.gettempdir())
            root = Path(tempfile.mkdtemp(prefix=own_prefix(KEPT)))
            root.chmod(0o755)
            weakref.finalize(self, _remove_own, root, os.getpid())
            self._root = root
        return self._root


@cache
def _remove_ended_in(parent: str) -> None:
    """Once per process and temporary folder (a forked child's parent did it)."""
    for kind in (KEPT, ONE_COMMAND):
        remove_ended(kind, Path(parent))


def _again(error: BaseException) -> BaseException:
    """The error of a split another caller made, for this caller to raise: the same words."""
    if isinstance(error, HeldOutError):
        return HeldOutError(str(error))
    return RuntimeError(f"the evaluation rows could not be split: {type(error).__name__}: {error}")


def _remove_own(root: Path, pid: int) -> None:
    if os.getpid() == pid:  # never a forked child's exit: the folder is its parent's
        shutil.rmtree(root, ignore_errors=True)


_EVERY: weakref.WeakSet[HeldOutSplits] = weakref.WeakSet()


def _forget_in_child() -> None:
    for splits in list(_EVERY):
        splits._forget()


os.register_at_fork(after_in_child=_forget_in_child)

SPLITS = HeldOutSplits()
"""This process's splits."""
