"""The column_rename fallback for names held away from the read. A read the entry-point renames do not cover
(a record's field, a frame the function loads itself) whose key ``column_names`` resolves to where the name
is written follows the rename there: the string constant of a class attribute, a constructor or function
default, a constant of this module or a sibling one, a config dict (in the constant's own quotes), or the
value of a JSON/TOML/YAML config file the module loads (in the file's quotes).

A holder that a read on a renamed frame also uses keeps the old name (that read still sees the old schema).
A holder in a file a repair may not edit is left alone and reported (``blocked``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from libs.python_source.literals import literal_like
from libs.python_source.source_text import Replacement, SourceText
from services.repairer.strategies.column_access import ColumnAccess
from services.repairer.strategies.column_names import NameHolder, config_value_span
from services.repairer.strategies.package_modules import PackageModules

PLAIN_YAML = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")

HolderKey = tuple[str, object]


def holder_key(holder: NameHolder) -> HolderKey:
    """One identity per place a name is written: a constant node of a module, or keys of a config file."""
    return (holder.path, id(holder.node)) if holder.node is not None else (holder.path, holder.keys)


@dataclass
class HolderRenames:
    package: PackageModules
    kept: set[HolderKey] = field(default_factory=set)
    """Holders a read on a renamed frame uses."""
    replacements: dict[str, dict[tuple[int, int], Replacement]] = field(default_factory=dict)
    """Per file, the renamed holders by span."""
    blocked: set[str] = field(default_factory=set)
    config_files: set[str] = field(default_factory=set)

    def keep(self, access: ColumnAccess) -> None:
        if access.holder is not None:
            self.kept.add(holder_key(access.holder))

    def rename(self, access: ColumnAccess, old: str, new: str) -> bool:
        """Rename where the access's name is written; whether it was (or already is)."""
        holder = access.holder
        if holder is None or holder.column != old or holder_key(holder) in self.kept:
            return False
        if not self.package.permitted(holder.path):
            self.blocked.add(holder.path)
            return False
        replacement = self._replacement(holder, old, new)
        if replacement is None:
            return False
        self.replacements.setdefault(holder.path, {})[(replacement.start, replacement.end)] = replacement
        if holder.node is None:
            self.config_files.add(holder.path)
        return True

    def _replacement(self, holder: NameHolder, old: str, new: str) -> Replacement | None:
        if holder.node is not None:
            module = self.package.module(holder.path)
            if module is None:
                return None
            segment = SourceText(module.source).segment(holder.node)
            start, end = SourceText(module.source).span(holder.node)
            plain = segment[1:-1] == old and segment[:1] == segment[-1:]
            return Replacement(start, end, literal_like(new, segment if plain else ""))
        text = self.package.context.candidate.read(holder.path)
        span = config_value_span(text, holder.path, holder.keys, old) if text is not None and holder.keys else None
        if span is None:
            return None
        start, end, quote = span
        return Replacement(start, end, _config_text(new, quote))


def _config_text(value: str, quote: str) -> str:
    """``value`` as a config file writes a string in ``quote`` (double quotes: JSON's own escaping)."""
    if quote == "'" and "'" not in value and "\\" not in value:
        return f"'{value}'"
    if quote == "" and PLAIN_YAML.fullmatch(value):
        return value
    return json.dumps(value)
