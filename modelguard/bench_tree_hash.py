"""``python -m modelguard.bench_tree_hash``: what hashing a command's working tree costs, as the sandbox does before
and after every command (``libs/sandbox/integrity.py``), every file read against the digests it knows
(``libs/sandbox/known_digests.py``: a file whose status is unchanged since a reading is not read). The tree is made
once in a scratch folder: ``--files`` files of varied sizes (half under 5 kB, some up to 256 kB, as a model
repository's code, notebooks and small data files), in folders of twenty; its files are left to settle before the
clock starts. Median over the rounds, read and known hashes alternating."""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.integrity import hash_tree
from libs.sandbox.known_digests import SETTLED_NS, KnownDigests

FILES = 2_000
ROUNDS = 7
MAX_BYTES = 1 << 18


@dataclass(frozen=True)
class TreeHashFigures:
    files: int
    size_bytes: int
    every_file_read_s: float
    known_s: float
    files_read_when_known: int


def write_tree(root: Path, files: int, seed: int = 20261207) -> int:
    """``files`` files under ``root``, twenty a folder, sizes log-uniform from 100 bytes to ``MAX_BYTES``; their
    total size in bytes."""
    rng = random.Random(seed)
    total = 0
    for index in range(files):
        folder = root / f"pkg{index // 20:04d}"
        folder.mkdir(exist_ok=True)
        size = int(100 * (MAX_BYTES / 100) ** rng.random())
        (folder / f"part{index:05d}.py").write_bytes(rng.randbytes(size))
        total += size
    return total


def tree_hash_figures(root: Path, rounds: int = ROUNDS) -> TreeHashFigures:
    """Hash the tree under ``root`` ``rounds`` times every file read and ``rounds`` times with its digests known
    (alternating), once its files have settled."""
    newest = max(path.stat().st_ctime_ns for path in root.rglob("*"))
    while time.time_ns() - newest <= 2 * SETTLED_NS:
        time.sleep(0.05)
    known = KnownDigests()
    digests = hash_tree(root, known)  # the first hash of a tree reads every file
    read_first = known.read
    full: list[float] = []
    again: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        if hash_tree(root) != digests:
            raise RuntimeError("the tree changed while it was measured")
        full.append(time.perf_counter() - started)
        started = time.perf_counter()
        if hash_tree(root, known) != digests:
            raise RuntimeError("the known digests differ from the files' own")
        again.append(time.perf_counter() - started)
    size = sum((root / name).stat().st_size for name in digests)
    return TreeHashFigures(
        files=len(digests),
        size_bytes=size,
        every_file_read_s=statistics.median(full),
        known_s=statistics.median(again),
        files_read_when_known=known.read - read_first,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m modelguard.bench_tree_hash", description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=FILES, help="files in the tree (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="hashes of each kind (default %(default)s)")
    options = parser.parse_args(argv)
    if options.files < 1 or options.rounds < 1:
        parser.error("--files and --rounds must be at least 1")
    with tempfile.TemporaryDirectory(prefix="modelguard-tree-hash-") as scratch:
        root = Path(scratch)
        write_tree(root, options.files)
        figures = tree_hash_figures(root, options.rounds)
    print(
        f"working tree hash: {figures.files} files, {figures.size_bytes / 1e6:.1f} MB (median of {options.rounds})\n"
        f"  every file read        {figures.every_file_read_s * 1e3:8.1f} ms\n"
        f"  digests known          {figures.known_s * 1e3:8.1f} ms   "
        f"{figures.every_file_read_s / figures.known_s:.1f}x; files read again: {figures.files_read_when_known}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
