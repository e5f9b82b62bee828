"""How the console is reached and who may read it, from flags and the environment; refused in one line when unsafe.

Auth fails closed: a bearer token (``MODELGUARD_CONSOLE_TOKEN`` or a token file), a trusted header set by an OIDC
proxy in front of the console (``MODELGUARD_CONSOLE_TRUSTED_HEADER``), or both. With neither, the console starts
only with ``insecure_local``, and then on a loopback address only.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

TOKEN_ENV = "MODELGUARD_CONSOLE_TOKEN"
TOKEN_FILE_ENV = "MODELGUARD_CONSOLE_TOKEN_FILE"
TRUSTED_HEADER_ENV = "MODELGUARD_CONSOLE_TRUSTED_HEADER"
CONTEXT_METRICS_ENV = "MODELGUARD_CONSOLE_CONTEXT_METRICS_URL"
MIN_TOKEN_LENGTH = 16
_HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
_NOT_IDENTITY_HEADERS = {"authorization", "cookie", "host", "content-type", "content-length"}


class ConsoleConfigError(ValueError):
    """The console cannot start as asked; the message is one readable line."""


@dataclass(frozen=True)
class ConsoleAuth:
    token: str | None = None
    trusted_header: str | None = None
    """Lower-case header name whose non-empty value is the user an OIDC proxy authenticated."""

    @property
    def configured(self) -> bool:
        return self.token is not None or self.trusted_header is not None

    def __repr__(self) -> str:  # the token never reaches a log line or a traceback
        return f"ConsoleAuth(token={'set' if self.token else None}, trusted_header={self.trusted_header!r})"


@dataclass(frozen=True)
class ConsoleConfig:
    host: str
    port: int
    auth: ConsoleAuth
    context_metrics: str | None = None
    """The context service's ``/metrics`` (the MCL intake's counts); None: the embedded stack's, when it runs."""


def console_config(
    env: Mapping[str, str],
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    token_file: str | None = None,
    trusted_header: str | None = None,
    insecure_local: bool = False,
    context_metrics: str | None = None,
) -> ConsoleConfig:
    if not 0 <= port <= 65535:
        raise ConsoleConfigError(f"--port {port} is not a TCP port (0-65535)")
    auth = ConsoleAuth(_token(env, token_file), _header(trusted_header or env.get(TRUSTED_HEADER_ENV)))
    if not auth.configured and not insecure_local:
        raise ConsoleConfigError(
            f"no auth configured: set {TOKEN_ENV} (or --token-file / {TOKEN_FILE_ENV}) or --trusted-header "
            f"(or {TRUSTED_HEADER_ENV}) for an OIDC proxy; --insecure-local serves 127.0.0.1 without auth"
        )
    if insecure_local and not _loopback(host):
        raise ConsoleConfigError(f"--insecure-local serves a loopback address only, not {host}")
    return ConsoleConfig(host, port, auth, _metrics_url(context_metrics or env.get(CONTEXT_METRICS_ENV)))


def _token(env: Mapping[str, str], token_file: str | None) -> str | None:
    path = token_file or env.get(TOKEN_FILE_ENV)
    if path and env.get(TOKEN_ENV):
        raise ConsoleConfigError(f"give the token by {TOKEN_ENV} or by a token file, not both")
    if path:
        try:
            token = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConsoleConfigError(f"cannot read the token file {path}: {exc.__class__.__name__}") from exc
        where = f"the token file {path}"
    else:
        token, where = (env.get(TOKEN_ENV) or "").strip(), TOKEN_ENV
        if not token:
            return None
    if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
        raise ConsoleConfigError(f"{where} holds no usable token: {MIN_TOKEN_LENGTH} characters or more, no spaces")
    return token


def _header(name: str | None) -> str | None:
    if not name:
        return None
    if not _HEADER_NAME.match(name) or name.lower() in _NOT_IDENTITY_HEADERS:
        raise ConsoleConfigError(f"--trusted-header {name[:64]!r} is not a header an OIDC proxy sets for its user")
    return name.lower()


def _metrics_url(url: str | None) -> str | None:
    """An http(s) URL with a host and no credentials in it (the page names where the counts come from)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host, parts = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host or len(url) > 2000:
        raise ConsoleConfigError(f"--context-metrics {url[:80]!r} is not an http(s) URL of the context's /metrics")
    if parts.username is not None or parts.password is not None:
        raise ConsoleConfigError("--context-metrics: no credentials in the URL (the page names where counts come from)")
    return url


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
