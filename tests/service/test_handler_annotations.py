"""The modules whose functions Litestar parses keep their annotations evaluated.

Litestar resolves the signature of every route handler and dependency provider again for each
app it builds. With `from __future__ import annotations` each annotation is a string that it
evaluates every time; evaluated ones cost it nothing. That was about a third of `create_app`
(140 ms to 90 ms here), paid at every service start and by the hundreds of apps the tests build.
"""

import __future__

import sys

from litestar.di import Provide

from services.app import create_app
from tests.service.conftest import SettingsFactory

OWN_PACKAGES = ("services.", "tournament.", "domain.", "eventstore.")


def _modules_litestar_parses(settings: SettingsFactory) -> set[str]:
    app = create_app(settings())
    names: set[str] = set()
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            names.add(handler.fn.__module__)
    for provider in app.dependencies.values():
        if isinstance(provider, Provide):
            names.add(provider.dependency.__module__)
    return {n for n in names if n.startswith(OWN_PACKAGES)}


def test_no_handler_or_provider_module_postpones_its_annotations(
    make_settings: SettingsFactory,
) -> None:
    modules = _modules_litestar_parses(make_settings)
    # The controllers, the web pages and the dependency providers, at the least.
    assert {"services.controllers.games", "services.controllers.deps", "services.web.pages"} <= (
        modules
    )
    postponed = sorted(
        name
        for name in modules
        if getattr(sys.modules[name], "annotations", None) is __future__.annotations
    )
    assert not postponed, (
        f"{postponed} use `from __future__ import annotations`: Litestar would evaluate "
        "their handlers' annotations again for every app it builds"
    )
