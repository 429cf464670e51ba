"""What the Schemathesis suites (test_fuzz.py, and test_fuzz_many.py's many examples) send
their generated requests to: an app whose database holds a player and a live game, the admin's
token and the player's, and the check of each answer (no 5xx, errors as problem+json, never a
traceback). Made once per test process, shared by both modules."""

from __future__ import annotations

import tempfile

import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hsettings
from litestar.testing import TestClient
from schemathesis.checks import not_a_server_error

from services.app import create_app
from services.settings import load_settings
from tests.service.helpers import ADMIN, bearer, create_game, create_player

_DIR = tempfile.mkdtemp(prefix="king-fuzz-")
APP = create_app(
    load_settings(
        data_dir=_DIR,
        admin_token=ADMIN,
        rate_limit_per_second=0,
        log_level="error",
        run_driver=False,  # the game waits for the player's seat for as long as the run lasts
        # Schemathesis starts the app's lifespan and never ends it, so a scheduler would go on
        # firing into interpreter exit (an invitation_sweep_error at every run's end). Nothing
        # fuzzed here needs one: tournaments advance in their own suites.
        run_scheduler=False,
        max_strikes=100,  # generated illegal actions are strikes: keep the player seated
    )
)
PLAYER = "fuzzer"
with TestClient(APP) as _client:
    TOKENS = {"admin": ADMIN, "player": create_player(_client, PLAYER)}
    SEATS = [PLAYER, "house:random", "house:random", "house:random"]
    GAME = create_game(_client, TOKENS["player"], SEATS, rules={"first_declarer": "seat0"})
SCHEMA = schemathesis.openapi.from_asgi("/schema/openapi.json", APP)
# Only "no server error" here, in process and fast; every check of the whole contract runs
# against a live service in tests/service/test_openapi_contract.py.
CHECKS = [not_a_server_error]
ANSWER_SECONDS = 120
FAST = hsettings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
SLOW = hsettings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def check(case: schemathesis.Case, who: str) -> None:
    if case.path.endswith("/events"):
        if case.path == "/api/v1/me/events":
            if who == "player":
                return  # a player's notices stream has no end (nothing to resume): not fuzzed
        else:
            case.query = {**(case.query or {}), "follow": "false"}
    if who == "player":  # aim at the player's own live game and own record
        params = case.path_parameters or {}
        if "game_id" in params:
            params["game_id"] = GAME
        if "player_id" in params:
            params["player_id"] = PLAYER
    # Two minutes for an answer, not Schemathesis's default 10 s: CI runs the many-examples
    # suite at idle priority beside its other steps, where a request can wait that long for a
    # core, and a 404 once did. What is checked is the answer, not its speed; the bound only
    # names a request that hangs. A stream keeps the default: it is how long a stream that
    # never ends is read.
    extra = {} if case.path.endswith("/events") else {"timeout": ANSWER_SECONDS}
    response = case.call(headers=bearer(TOKENS[who]), **extra)
    if case.path == "/health/ready" and response.status_code == 503:
        return  # readiness answers 503 by design when a check fails
    case.validate_response(response, checks=CHECKS)
    if response.status_code >= 400:
        assert response.headers.get("content-type", [""])[0].startswith("application/problem+json")
    assert "Traceback" not in response.text
    if case.path == "/api/v1/me/token" and response.status_code in (200, 201):
        TOKENS[who] = response.json()["token"]  # the player rotated its token
