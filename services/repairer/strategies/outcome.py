"""What a repair strategy returns: a minimal source edit of one file, or a refusal with its reason."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SourceEdit(BaseModel):
    model_config = ConfigDict(frozen=True)

    strategy: str
    file: str
    function: str
    inserted_after_line: int
    inserted_lines: tuple[str, ...]
    new_content: str
    unified_diff: str
    rationale: str


class StrategyRefusal(BaseModel):
    model_config = ConfigDict(frozen=True)

    strategy: str
    reason: str
