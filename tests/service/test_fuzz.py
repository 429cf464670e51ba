"""Schemathesis over the OpenAPI schema: generated requests never get a 5xx, and every
response matches the schema's status codes and content types. Small by default; `-m slow`
runs many more examples."""

from __future__ import annotations

import tempfile

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hsettings

from services.app import create_app
from services.settings import load_settings
from tests.service.helpers import ADMIN

_DIR = tempfile.mkdtemp(prefix="king-fuzz-")
APP = create_app(
    load_settings(
        data_dir=_DIR,
        admin_token=ADMIN,
        rate_limit_per_second=0,
        log_level="error",
        run_driver=False,
    )
)
SCHEMA = schemathesis.openapi.from_asgi("/schema/openapi.json", APP)
HEADERS = {"authorization": f"Bearer {ADMIN}"}
FAST = hsettings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
SLOW = hsettings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def _check(case: schemathesis.Case) -> None:
    case.query = (
        {**(case.query or {}), "follow": "false"} if case.path.endswith("/events") else case.query
    )
    response = case.call(headers=HEADERS)
    if case.path == "/health/ready" and response.status_code == 503:
        return  # readiness answers 503 by design when a check fails
    assert response.status_code < 500, (case.method, case.path, response.status_code, response.text)
    if response.status_code >= 400:
        assert response.headers.get("content-type", [""])[0].startswith("application/problem+json")
    assert "Traceback" not in response.text


@SCHEMA.parametrize()
@FAST
def test_generated_requests_never_get_a_server_error(case: schemathesis.Case) -> None:
    _check(case)


@pytest.mark.slow
@SCHEMA.parametrize()
@SLOW
def test_many_generated_requests_never_get_a_server_error(case: schemathesis.Case) -> None:
    _check(case)
