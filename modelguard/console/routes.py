"""The console's pages. Each reads the ledger afresh: what is shown is what the log holds now."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from libs.events.codec import MalformedMessage
from modelguard.console.incident_list import STUCK_AFTER_MIN, BadFilter, incident_list
from modelguard.console.incident_view import incident_view
from modelguard.console.intake_source import IntakeCountsSource
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.console.operations_view import operations_view
from modelguard.console.templates_env import STATIC_DIR

INCIDENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class Pages:
    def __init__(self, ledger: ConsoleLedger, templates: Jinja2Templates, intake: IntakeCountsSource) -> None:
        self.ledger, self.templates, self.intake = ledger, templates, intake

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", self.incidents, name="incidents"),
            Route("/incidents/{incident_id}", self.incident, name="incident"),
            Route("/operations", self.operations, name="operations"),
            Route("/healthz", self.health, name="health"),
            Route("/readyz", self.ready, name="ready"),
            Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        ]

    async def incidents(self, request: Request) -> Response:
        try:
            projections, failure = self.ledger.projections()
        except MalformedMessage as exc:
            return self._refused(request, f"the ledger does not decode ({exc}); run `modelguard verify`", 500)
        try:
            listing = incident_list(projections, request.query_params, datetime.now(UTC))
        except BadFilter as exc:
            return self._refused(request, str(exc), 400)
        context = {"listing": listing, "failure": failure, "stuck_after": STUCK_AFTER_MIN}
        return self._page(request, "incidents.html", context)

    async def incident(self, request: Request) -> Response:
        incident_id = request.path_params["incident_id"]
        rows = self.ledger.rows(incident_id) if INCIDENT_ID.match(incident_id) else []
        if not rows:
            return self._refused(request, f"no incident {incident_id[:128]!r} in the ledger", 404)
        return self._page(request, "incident.html", {"view": incident_view(self.ledger, incident_id, rows)})

    def operations(self, request: Request) -> Response:
        """Synchronous, so starlette runs it in its thread pool: it reads the database and the context's /metrics."""
        try:
            projections, failure = self.ledger.projections()
        except MalformedMessage as exc:
            return self._refused(request, f"the ledger does not decode ({exc}); run `modelguard verify`", 500)
        try:
            view = operations_view(self.ledger, projections, self.intake, request.query_params, datetime.now(UTC))
        except SQLAlchemyError as exc:
            return self._refused(request, f"the ledger's database does not answer ({type(exc).__name__})", 503)
        return self._page(request, "operations.html", {"view": view, "failure": failure})

    async def health(self, _request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def ready(self, _request: Request) -> Response:
        """Ready when the ledger answers; says nothing of what it holds."""
        try:
            self.ledger.store.head_position()
        except SQLAlchemyError:
            return PlainTextResponse("the ledger does not answer\n", 503)
        return PlainTextResponse("ok\n")

    def _page(self, request: Request, name: str, context: Mapping[str, object], status: int = 200) -> Response:
        page = {**context, "user": request.scope.get("user_name")}
        return self.templates.TemplateResponse(request, name, page, status_code=status)

    def _refused(self, request: Request, line: str, status: int) -> Response:
        return self._page(request, "refused.html", {"line": line}, status)
