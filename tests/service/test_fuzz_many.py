"""Schemathesis's many examples (`-m slow`) of what test_fuzz.py checks with a few: generated
requests never get a 5xx, errors come as problem+json and never with a traceback.

Only slow tests, whose cases Schemathesis builds while collecting (a few seconds a process):
tests/conftest.py leaves this module uncollected when the run selects no slow test."""

from __future__ import annotations

import pytest
import schemathesis

from tests.service.fuzz_target import SCHEMA, SLOW, check


@pytest.mark.slow
@pytest.mark.compute
@SCHEMA.parametrize()
@SLOW
def test_many_generated_requests_never_get_a_server_error(case: schemathesis.Case) -> None:
    check(case, "admin")


@pytest.mark.slow
@pytest.mark.compute
@SCHEMA.parametrize()
@SLOW
def test_many_of_a_players_generated_requests_never_get_a_server_error(
    case: schemathesis.Case,
) -> None:
    check(case, "player")
