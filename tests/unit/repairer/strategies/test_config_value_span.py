"""Where a workspace config file writes a column's name (``config_value_span``, the repairer's config route): the
file is the pull request's. Its TOML and YAML patterns began with ``(?m)^\\s*``, and ``\\s`` crosses a newline, so
each of N blank lines started an attempt that ran to the end of all of them: quadratic (5k, 10k, 20k newlines took
0.16, 0.64, 2.7 s). The indentation before a key is now taken from the key's own line only; the spans found are
the old pattern's, which a differential test over random small configs shows."""

from __future__ import annotations

import random
import re

import pytest

from services.repairer.strategies.column_names import config_value_pattern, config_value_span

KEYS = ("column", "target", "a.b", "x-y")
VALUES = ("churn", "monthly spend", "a.b", "x'y", "v")
PATHS = ("model.toml", "config.yaml", "settings.yml", "conf.json")


def old_pattern(path: str, key: str, value: str) -> str:
    """The patterns before the fix, as they were."""
    key = re.escape(key)
    plain = re.escape(value)
    if path.endswith(".json"):
        return rf'"{key}"\s*:\s*(?P<value>"{plain}")'
    if path.endswith(".toml"):
        return rf'(?m)^\s*["\']?{key}["\']?\s*=\s*(?P<value>"{plain}"|\'{plain}\')'
    return rf'(?m)^\s*["\']?{key}["\']?\s*:\s*(?P<value>"{plain}"|\'{plain}\'|{plain})\s*(?:#.*)?$'


def old_span(text: str, path: str, key: str, value: str) -> tuple[int, int, str] | None:
    matches = list(re.finditer(old_pattern(path, key, value), text))
    if len(matches) != 1:
        return None
    start, end = matches[0].span("value")
    written = text[start:end]
    return start, end, written[0] if written[:1] in ("'", '"') else ""


@pytest.mark.parametrize("path", ["model.toml", "config.yaml"])
def test_an_attempt_at_a_line_start_stays_on_that_line_until_the_key(path: str) -> None:
    # what made it quadratic: from each blank line's start, "^\s*" ran over every blank line after it to the key
    separator = "=" if path.endswith(".toml") else ":"
    pattern = re.compile(config_value_pattern(path, "column", "churn"))
    assert pattern.match(f'\n\n  column {separator} "churn"\n') is None
    assert pattern.match(f'\r\n  column {separator} "churn"\r\n') is None
    assert pattern.match(f' \t\r column {separator} "churn"\n') is not None


@pytest.mark.parametrize("path", ["model.toml", "config.yaml"])
def test_a_key_after_many_blank_lines_is_found(path: str) -> None:
    separator = "=" if path.endswith(".toml") else ":"
    blank = "\n" * 200_000 + " \t\r\n" * 1000
    text = f'{blank}  column {separator} "churn"\n{blank}'
    start = text.index('"churn"')
    assert config_value_span(text, path, ("model", "column"), "churn") == (start, start + len('"churn"'), '"')


def _random_config(rng: random.Random, path: str) -> tuple[str, str, str]:
    """A config text, and a key and value to look for (most often ones it writes)."""
    separator = "=" if path.endswith(".toml") else ":"
    newline = rng.choice(["\n", "\r\n", "\n", "\r"])
    lines = []
    key, value = rng.choice(KEYS), rng.choice(VALUES)
    for _ in range(rng.randint(0, 8)):
        kind = rng.random()
        indent = "".join(
            rng.choice([" ", "\t", "\r", "\x0b", "\x0c", "\xa0", "\u2028", "\x85"]) for _ in range(rng.randint(0, 3))
        )
        if kind < 0.55:
            if rng.random() < 0.4:
                key, value = rng.choice(KEYS), rng.choice(VALUES)
            quote_key = rng.choice(["", "", '"', "'"])
            written = rng.choice([value, f'"{value}"', f"'{value}'", f'"{value}x"', f"[{value}]"])
            around = (" " * rng.randint(0, 2), rng.choice(["", " ", "  ", "\t", "\n"]))
            tail = rng.choice(["", "", " ", " # note", "# x", "\t#", " trailing", "\r"])
            if path.endswith(".json"):
                lines.append(f'{indent}"{key}"{around[0]}:{around[1]}{written},')
            else:
                lines.append(f"{indent}{quote_key}{key}{quote_key}{around[0]}{separator}{around[1]}{written}{tail}")
        elif kind < 0.75:
            lines.append(indent)
        elif kind < 0.85:
            lines.append(f"{indent}# {rng.choice(KEYS)}{separator} {rng.choice(VALUES)}")
        else:
            lines.append(indent + rng.choice(["[section]", "- item", "{", "}", "key2: other", ""]))
    return newline.join(lines) + rng.choice(["", newline, newline * 3]), key, value


@pytest.mark.parametrize("path", PATHS)
def test_random_small_configs_give_the_old_patterns_spans(path: str) -> None:
    rng = random.Random(f"config-value-span-{path}")
    found = 0
    for _ in range(4000):
        text, key, value = _random_config(rng, path)
        expected = old_span(text, path, key, value)
        assert config_value_span(text, path, ("outer", key), value) == expected, (text, key, value)
        found += expected is not None
    assert found > 600  # the texts write the key and value often enough for the comparison to mean something
