"""The whole stack over the real broker: the seven services as processes, as `make demo` runs them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from modelguard.stack import SCENARIOS
from tests.support.running_stack import RunningStack, running_stack

CHURN = SCENARIOS / "churn-monthly-spend"

__all__ = ["CHURN", "RunningStack", "stack"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    with running_stack(tmp_path_factory.mktemp("stack")) as running:
        yield running
