"""Load and check a bundle folder: ``bundle.yaml`` plus the required trees and data windows (each CSV's shape
and label column: ``data_shape``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from libs.bundle.data_shape import DataShapeError, check_csv_shape
from libs.bundle.spec import BundleSpec
from libs.yaml_errors import yaml_error_line

BUNDLE_FILE = "bundle.yaml"
WINDOWS = ("approval", "incident")
WINDOW_FILES = ("train.csv", "eval.csv")
REVISIONS = ("base", "candidate")
MAX_FILE_BYTES = 5 * 1024 * 1024
SKIPPED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"})


class BundleError(ValueError):
    """The bundle is missing a file, malformed, or unsafe; the message is one readable line."""


@dataclass(frozen=True)
class Bundle:
    root: Path
    spec: BundleSpec

    @property
    def name(self) -> str:
        return self.spec.name

    def tree(self, revision: str) -> Path:
        return self.root / "workspace" / revision

    def window_file(self, window: str, name: str) -> Path:
        return self.root / "data" / window / name

    @property
    def metadata_file(self) -> Path | None:
        path = self.root / "datahub" / "metadata.json"
        return path if path.is_file() else None

    @property
    def changes_file(self) -> Path | None:
        path = self.root / "datahub" / "changes.json"
        return path if path.is_file() else None


def is_bundle(folder: Path) -> bool:
    return (Path(folder) / BUNDLE_FILE).is_file()


def load_bundle(folder: Path) -> Bundle:
    root = Path(folder).resolve()
    spec_path = root / BUNDLE_FILE
    if not spec_path.is_file():
        raise BundleError(f"{folder}: not a bundle (no {BUNDLE_FILE})")
    try:
        document = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BundleError(yaml_error_line(spec_path, exc)) from exc
    except RecursionError:  # PyYAML composes a node per level, recursively
        raise BundleError(f"{spec_path}: not YAML this reader can take: nested past the parser's limit") from None
    if not isinstance(document, dict):
        raise BundleError(f"{spec_path}: must be a mapping")
    try:
        spec = BundleSpec.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        raise BundleError(f"{spec_path}: {where}: {first['msg']}") from exc
    bundle = Bundle(root=root, spec=spec)
    for revision in REVISIONS:
        check_tree(bundle.tree(revision), f"workspace/{revision}")
    for window in WINDOWS:
        for name in WINDOW_FILES:
            path = bundle.window_file(window, name)
            if not path.is_file() or path.is_symlink():
                raise BundleError(f"{root}: missing data/{window}/{name}")
            try:
                check_csv_shape(path, spec.workspace.label, f"{root}/data/{window}/{name}")
            except DataShapeError as exc:
                raise BundleError(str(exc)) from exc
    return bundle


def check_tree(tree: Path, label: str) -> None:
    """A revision is regular files only: no links, no VCS folder, nothing too large."""
    if not tree.is_dir() or tree.is_symlink():
        raise BundleError(f"{tree.parent.parent}: missing {label}/")
    if not any(tree.iterdir()):
        raise BundleError(f"{tree}: {label} is empty")
    for path in tree.rglob("*"):
        relative = path.relative_to(tree)
        if any(part in SKIPPED_NAMES for part in relative.parts):
            continue
        if path.is_symlink():
            raise BundleError(f"{label}/{relative}: links are not allowed in a bundle")
        if path.name in {".git", ".hg", ".svn"}:
            raise BundleError(f"{label}/{relative}: a bundle stores plain files, not a repository")
        if path.is_file() and path.stat().st_size > MAX_FILE_BYTES:
            raise BundleError(f"{label}/{relative}: larger than {MAX_FILE_BYTES} bytes")
