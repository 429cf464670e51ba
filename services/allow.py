"""`Allow` on OPTIONS answers that lists every method of the path.

Litestar answers OPTIONS itself, with a handler it makes for each route. A path whose methods
come from handlers registered one after another (a controller's `@get("/")` and `@post("/")`)
is rebuilt as one route on each registration, but keeps the OPTIONS handler made for the
first: that handler lists only the first route's methods. `fresh_options` replaces each such
handler once, when the app is built, by one made for the route as it now is.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.routes import HTTPRoute

OPTIONS_HANDLER = "options_handler"  # the name of Litestar's own OPTIONS handler function


def fresh_options(app: Litestar) -> None:
    """Give every route of `app` an OPTIONS handler of its own methods (in place)."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        made = [
            h
            for h in route.route_handlers
            if h.handler_name == OPTIONS_HANDLER and not h.include_in_schema
        ]
        if not made or len(route.route_handlers) - len(made) < 2:
            continue  # (one handler: the OPTIONS handler made with it lists its methods)
        fresh = route.create_options_handler(route.path)
        fresh.owner = made[0].owner
        fresh.on_registration(app)
        route.route_handlers = [h for h in route.route_handlers if h not in made] + [fresh]
        route.route_handler_map = {}
        route.create_handler_map()
    app.asgi_router.construct_routing_trie()
