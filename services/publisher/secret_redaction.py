"""Keeping credentials out of messages: every text a channel builds from remote answers passes through here."""

from __future__ import annotations

import threading

REDACTED = "[REDACTED]"


class SecretRedactor:
    """Knows the secrets in use (tokens, signed JWTs) and blanks them out of any text."""

    def __init__(self, *secrets: str | None) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 4:
            with self._lock:
                self._secrets.add(secret)

    def redact(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            text = text.replace(secret, REDACTED)
        return text
