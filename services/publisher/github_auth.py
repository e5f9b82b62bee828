"""Credentials for GitHub's REST API: a token, or a GitHub App's installation token.

App flow: a JWT (RS256, signed with the App's private key through `cryptography`, valid ten minutes, issued a
minute in the past for clock drift) is exchanged at `POST /app/installations/{id}/access_tokens` for an
installation token, cached until five minutes before it expires. Every secret is registered with the redactor
the moment it exists, so no message built afterwards can carry it.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from services.publisher.channel_errors import ChannelRejected
from services.publisher.secret_redaction import SecretRedactor

TokenExchange = Callable[[str, str], dict[str, object]]  # (path, bearer JWT) -> JSON answer
REFRESH_MARGIN_S = 300.0
INSTALLATION_TOKEN_LIFETIME_S = 3600.0
"""How long GitHub's installation tokens live: a token is held no longer, whatever expiry its answer gave."""


class GitHubCredentials(Protocol):
    def authorization(self, exchange: TokenExchange) -> str | None:
        """The Authorization header value for the next request (None: anonymous)."""
        ...


class AnonymousAccess:
    def authorization(self, exchange: TokenExchange) -> str | None:
        return None


class StaticToken:
    """A personal access token, or the `GITHUB_TOKEN` of a GitHub Actions job."""

    def __init__(self, token: str, redactor: SecretRedactor) -> None:
        redactor.add(token)
        self._token = token

    def authorization(self, exchange: TokenExchange) -> str | None:
        return f"Bearer {self._token}"

    def __repr__(self) -> str:
        return "StaticToken([REDACTED])"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def app_jwt(app_id: str, private_key: rsa.RSAPrivateKey, now_epoch_s: float) -> str:
    header = {"alg": "RS256", "typ": "JWT"}
    claims = {"iat": int(now_epoch_s) - 60, "exp": int(now_epoch_s) + 540, "iss": app_id}
    signing_input = ".".join(_b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (header, claims))
    signature = private_key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{_b64url(signature)}"


def load_app_private_key(path: Path) -> rsa.RSAPrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError(f"{path} does not hold an RSA private key (GitHub App keys are RSA)")
    return key


def expiry_epoch_s(expires_at: object, where: str) -> float:
    """When an installation token expires, from the ``expires_at`` GitHub answered the request ``where`` with.

    Not a time is a refused step (``ChannelRejected``, as an answer without a token), not a ValueError out of the
    handler. GitHub gives every time in UTC (``2026-05-10T12:00:00Z``); a time without a zone is read as UTC too,
    since reading it in the host's zone would keep a token hours past its end on a host west of UTC."""
    if not isinstance(expires_at, str):
        raise ChannelRejected(f"{where}: answered without an expires_at")
    try:
        moment = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        raise ChannelRejected(f"{where}: answered an expires_at of {expires_at[:40]!r}, not an ISO 8601 time") from None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()


class AppInstallationToken:
    def __init__(
        self,
        app_id: str,
        private_key: rsa.RSAPrivateKey,
        installation_id: int,
        redactor: SecretRedactor,
        clock: Callable[[], float],
    ) -> None:
        self.app_id = app_id
        self.installation_id = installation_id
        self._private_key = private_key
        self._redactor = redactor
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = threading.Lock()

    def authorization(self, exchange: TokenExchange) -> str | None:
        with self._lock:
            if self._token is None or self._clock() >= self._expires_at - REFRESH_MARGIN_S:
                self._refresh(exchange)
            return f"Bearer {self._token}"

    def _refresh(self, exchange: TokenExchange) -> None:
        jwt = app_jwt(self.app_id, self._private_key, self._clock())
        self._redactor.add(jwt)
        path = f"/app/installations/{self.installation_id}/access_tokens"
        answer, where = exchange(path, jwt), f"GitHub POST {path}"
        token = answer.get("token")
        if not isinstance(token, str):
            raise ChannelRejected(f"{where}: answered without a token")
        self._redactor.add(token)
        expires_at = expiry_epoch_s(answer.get("expires_at"), where)
        self._expires_at = min(expires_at, self._clock() + INSTALLATION_TOKEN_LIFETIME_S)
        self._token = token

    def __repr__(self) -> str:
        return f"AppInstallationToken(app={self.app_id}, installation={self.installation_id})"
