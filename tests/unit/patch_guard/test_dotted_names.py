"""`is_or_is_under` answers what trying every name of the set as a prefix answers, on the guard's own name sets
and on random dotted names."""

from __future__ import annotations

import random

from libs.patch_guard.constructs import FORBIDDEN_NAMES
from libs.patch_guard.dotted_names import is_or_is_under
from libs.patch_guard.refused_names import REFUSED_NAMES


def _by_trying_every_name(qualified: str, names: frozenset[str]) -> bool:
    return qualified in names or any(qualified.startswith(f"{name}.") for name in names)


def _names_to_ask(sets: list[frozenset[str]], rng: random.Random) -> list[str]:
    known = sorted({name for names in sets for name in names})
    parts = [*sorted({part for name in known for part in name.split(".")}), "", "x", "os2", "path"]
    asked = [*known]
    asked += [f"{name}.{rng.choice(parts)}" for name in known]  # inside a name
    asked += [f"{name}{rng.choice(['x', '_', '2'])}" for name in known]  # a longer name, not inside
    asked += [name.rsplit(".", 1)[0] for name in known if "." in name]  # the module above a name
    asked += [".".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    asked += ["", ".", "..", ".os", "os.", "os..system"]
    return asked


def test_the_answer_is_that_of_trying_every_name() -> None:
    rng = random.Random(7)
    sets = [*FORBIDDEN_NAMES.values(), *REFUSED_NAMES.values(), frozenset({"", "a.", "a.b", "z"})]
    asked = _names_to_ask(sets, rng)
    differ = [(q, sorted(s)[:3]) for s in sets for q in asked if is_or_is_under(q, s) != _by_trying_every_name(q, s)]
    assert differ == []
    yes = sum(is_or_is_under(q, s) for s in sets for q in asked)
    assert 1000 < yes < len(sets) * len(asked) - 1000  # both answers, many times


def test_a_longer_name_is_not_inside_a_shorter_one() -> None:
    assert is_or_is_under("os.system", frozenset({"os"}))
    assert is_or_is_under("os", frozenset({"os"}))
    assert not is_or_is_under("osx.system", frozenset({"os"}))
    assert not is_or_is_under("os", frozenset({"os.system"}))
