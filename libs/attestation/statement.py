"""The in-toto Statement v1 that ModelGuard signs: what is attested (subjects, by digest) and the predicate."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://modelguard.dev/attestation/incident/v1"
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
ATTESTATION_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"
"""The media type under which an attestation's envelope bytes are stored in the artifact store."""


class Subject(BaseModel):
    """One attested artefact, named and identified by its sha256."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    digest: dict[str, str] = Field(min_length=1)

    @property
    def sha256(self) -> str | None:
        return self.digest.get("sha256")


class Statement(BaseModel):
    """in-toto Statement v1 (github.com/in-toto/attestation spec/v1/statement.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    type_: str = Field(alias="_type")
    subject: list[Subject] = Field(min_length=1)
    predicateType: str = Field(min_length=1)
    predicate: dict[str, Any]

    def document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
