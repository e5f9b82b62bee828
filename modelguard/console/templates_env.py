"""The Jinja environment: the console's own templates, autoescape on for every one (metadata is hostile)."""

from __future__ import annotations

from pathlib import Path

import jinja2
from starlette.templating import Jinja2Templates

from modelguard.console.web_links import web_link

HERE = Path(__file__).parent
TEMPLATE_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"


def console_templates() -> Jinja2Templates:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["web_link"] = web_link  # None unless an http(s) address a page may link
    return Jinja2Templates(env=environment)
