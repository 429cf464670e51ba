"""The record checker answers every input with JSON and a status, never an exception."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from domain.record import check_record
from services.cli import main

CONFORMANCE = Path(__file__).resolve().parents[2] / "tests" / "conformance"
SAMPLES = sorted(p for p in CONFORMANCE.glob("*.json") if not p.name.endswith(".expected.json"))

CARD_MUTATIONS = ["AS", "KH", "2D", "TC", "1X", "", "10C", "as", " KH", "QS "]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


def _assert_answer(doc: Any) -> None:
    status, out = check_record(doc)
    assert status in (0, 1, 2)
    assert out["valid"] is (status == 0)
    if status:
        assert isinstance(out["error"]["code"], str) and out["error"]["code"]
    json.dumps(out)  # the answer is plain JSON


@settings(max_examples=300, deadline=None)
@given(doc=json_values)
def test_random_json_gets_an_answer(doc: Any) -> None:
    _assert_answer(doc)


@settings(max_examples=300, deadline=None)
@given(
    doc=st.fixed_dictionaries(
        {"format": st.just("king-record/1")},
        optional={
            "rules": json_values,
            "players": json_values,
            "shuffle": json_values,
            "deals": json_values,
        },
    )
)
def test_record_shaped_json_gets_an_answer(doc: dict[str, Any]) -> None:
    _assert_answer(doc)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _mutated_record(data: st.DataObject) -> Any:
    """A conformance record with one to three of its values deleted, replaced or swapped."""
    doc = json.loads(data.draw(st.sampled_from(SAMPLES)).read_text())
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["delete", "replace", "card", "swap"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = data.draw(json_values)
        elif action == "card":
            # Real names and near misses: only the exact upper-case names are cards.
            parent[path[-1]] = data.draw(st.sampled_from(CARD_MUTATIONS))
        elif isinstance(parent, list) and len(parent) > 1:
            i, j = (
                data.draw(st.integers(0, len(parent) - 1)),
                data.draw(st.integers(0, len(parent) - 1)),
            )
            parent[i], parent[j] = copy.deepcopy(parent[j]), copy.deepcopy(parent[i])
    return doc


@pytest.mark.skipif(not SAMPLES, reason=f"no conformance examples at {CONFORMANCE}")
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_mutated_conformance_records_get_an_answer(data: st.DataObject) -> None:
    _assert_answer(_mutated_record(data))


@pytest.mark.parametrize(
    "payload",
    [b"", b"{", b"[]", b"null", b"\xff\xfe", b"[" * 5000 + b"]" * 5000, b'{"format": 1}'],
)
def test_the_cli_never_prints_a_traceback(payload: bytes) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "record", "check", "-"],
        input=payload,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == "malformed"


def _cli(stdin: bytes) -> tuple[int, bytes, str]:
    """`king record check -` run in this process: exit status, standard output and error."""
    saved = sys.stdin, sys.stdout, sys.stderr
    stdout, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(stdin)), stdout, err
    try:
        status = main(["record", "check", "-"])
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    stdout.flush()
    return status, stdout.buffer.getvalue(), err.getvalue()  # type: ignore[attr-defined]


def _mutated_bytes(data: st.DataObject) -> bytes:
    """A conformance record's bytes with cuts, flipped, inserted or deleted bytes."""
    raw = bytearray(data.draw(st.sampled_from(SAMPLES)).read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, max(0, len(raw) - 1)))
        how = data.draw(st.sampled_from(["cut", "flip", "insert", "delete"]))
        if how == "cut":
            raw = raw[:i]
        elif how == "flip" and raw:
            raw[i] = data.draw(st.integers(0, 255))
        elif how == "insert":
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        else:
            del raw[i : i + data.draw(st.integers(1, 16))]
    return bytes(raw)


@pytest.mark.skipif(not SAMPLES, reason=f"no conformance examples at {CONFORMANCE}")
@settings(max_examples=40, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["record", "bytes", "random"]))
def test_the_cli_entry_answers_any_bytes_with_json_and_a_status(
    data: st.DataObject, kind: str
) -> None:
    if kind == "record":  # mutated values, still JSON: reaches the rules (exit 0, 1 or 2)
        payload = json.dumps(_mutated_record(data)).encode()
    elif kind == "bytes":  # mutated text: mostly not JSON any more
        payload = _mutated_bytes(data)
    else:
        payload = data.draw(st.binary(max_size=64))
    status, out, err = _cli(payload)
    assert status in (0, 1, 2), err
    event(f"{kind}: exit {status}")
    assert "Traceback" not in err
    answer = json.loads(out)  # exactly one JSON object on standard output
    assert isinstance(answer, dict) and answer["valid"] is (status == 0)
    if status:
        assert isinstance(answer["error"]["code"], str) and answer["error"]["message"]
    if status == 2:
        assert answer["error"]["code"] == "malformed"
