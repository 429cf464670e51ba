"""Schemathesis over the OpenAPI schema: generated requests never get a 5xx (Schemathesis's
own check), errors come as problem+json and never with a traceback. The database holds a
player and a live game first, and the requests go with the admin token and with the player's
token, the player's aimed at that game, so the action, seat and stream endpoints see a real
table (fuzz_target.py). Small here; test_fuzz_many.py (`-m slow`) runs many more examples."""

from __future__ import annotations

import schemathesis

from tests.service.fuzz_target import FAST, SCHEMA, check


@SCHEMA.parametrize()
@FAST
def test_generated_requests_never_get_a_server_error(case: schemathesis.Case) -> None:
    check(case, "admin")


@SCHEMA.parametrize()
@FAST
def test_a_players_generated_requests_never_get_a_server_error(case: schemathesis.Case) -> None:
    check(case, "player")
