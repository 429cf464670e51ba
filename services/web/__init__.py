"""Web pages: home, game replay, tournament, play — server-rendered Jinja2 with light JS.

`web_handlers()` gives the page routes and the static files; `template_config()` the Jinja2
setup. Pages read the store through the service container (never over HTTP), and every card
shown comes from the public record or the public view (domain.view): no live hand ever
reaches a page's HTML.
"""

from __future__ import annotations

from pathlib import Path

from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig
from litestar.types import ControllerRouterHandler

from services.web.accounts import AccountPages
from services.web.pages import WebController

HERE = Path(__file__).resolve().parent


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    return TemplateConfig(directory=HERE / "templates", engine=JinjaTemplateEngine)


def web_handlers() -> list[ControllerRouterHandler]:
    static = create_static_files_router(
        path="/static",
        directories=[HERE / "static"],
        name="web-static",
        include_in_schema=False,
        cache_control=None,
    )
    return [WebController, AccountPages, static]


__all__ = ["template_config", "web_handlers"]
