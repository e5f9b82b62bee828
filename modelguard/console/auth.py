"""Every request but the health probe needs the bearer token or the trusted proxy header; otherwise 401."""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from modelguard.console.config import ConsoleAuth

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
REFUSAL = "401: this console needs a bearer token, or the identity header of the proxy in front of it\n"


class RequireAuth:
    """ASGI middleware; puts the reader's name (the proxy's header value, or "token") in ``scope["user_name"]``."""

    def __init__(self, app: ASGIApp, auth: ConsoleAuth) -> None:
        self.app, self.auth = app, auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS or not self.auth.configured:
            await self.app(scope, receive, send)
            return
        user = self.reader(Headers(scope=scope))
        if user is None:
            refusal = PlainTextResponse(REFUSAL, 401, headers={"WWW-Authenticate": 'Bearer realm="modelguard-console"'})
            await refusal(scope, receive, send)
            return
        scope["user_name"] = user
        await self.app(scope, receive, send)

    def reader(self, headers: Headers) -> str | None:
        if self.auth.token is not None:
            scheme, _, presented = headers.get("authorization", "").partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), self.auth.token.encode()):
                return "token"
        if self.auth.trusted_header is not None:
            user = headers.get(self.auth.trusted_header, "").strip()
            if user:
                return user[:200]
        return None
