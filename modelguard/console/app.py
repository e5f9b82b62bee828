"""The console as an ASGI app: the pages behind auth, every response with the security headers."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from modelguard.console.auth import RequireAuth
from modelguard.console.config import ConsoleAuth
from modelguard.console.intake_source import IntakeCountsSource, NoMetrics
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.console.routes import Pages
from modelguard.console.security_headers import SecurityHeaders
from modelguard.console.templates_env import console_templates


def console_app(ledger: ConsoleLedger, auth: ConsoleAuth, intake: IntakeCountsSource | None = None) -> Starlette:
    """``intake``: where the Operations page reads the MCL intake's counts (``intake_source``); None: nowhere."""
    pages = Pages(ledger, console_templates(), intake or NoMetrics())
    return Starlette(
        routes=pages.routes(),
        middleware=[Middleware(SecurityHeaders), Middleware(RequireAuth, auth=auth)],
    )
