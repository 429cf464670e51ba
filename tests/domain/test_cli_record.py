"""`king record check` through the installed command line (shared/spec/GAME_RECORD.md).

The conformance examples of shared/conformance/ are checked as its README says (every key of the
expected file present with that value, exit status 0 or 1); then bad input (exit 2, a JSON
"malformed" error, never a traceback) and the record-level reason codes.

Each group's command lines run at once in a small thread pool (one process each), so the file
stays fast; every test then looks at the answer to its own input.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import PLAYERS, SEED, first_legal, hands, new_game, ok, play_deal_out, start_deal
from rule_book import BOOK_RULE

from domain.cards import names_of
from domain.commands import Declare, Play
from domain.playout import play_game
from domain.record import to_record
from domain.rules import Rules
from domain.shuffle import deal_hands

REPO = Path(__file__).resolve().parents[2]
# The project's copy of the public conformance set (tests/conformance/README.md says why).
CONFORMANCE = REPO / "tests" / "conformance"
EXAMPLES = sorted(p for p in CONFORMANCE.glob("*.json") if not p.name.endswith(".expected.json"))
needs_shared = pytest.mark.skipif(
    not CONFORMANCE.is_dir(), reason=f"conformance examples not found at {CONFORMANCE}"
)


# --- running the command --------------------------------------------------------------------


def king_command() -> list[str]:
    """The installed `king` script next to this Python, else `python -m services.cli`."""
    script = Path(sys.executable).with_name("king")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "services.cli"]


Job = tuple[str, bytes | None]  # the FILE argument, and standard input


def _run(job: Job) -> subprocess.CompletedProcess[bytes]:
    path, stdin = job
    return subprocess.run(
        [*king_command(), "record", "check", path],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


def run_all(jobs: Mapping[str, Job]) -> dict[str, subprocess.CompletedProcess[bytes]]:
    with ThreadPoolExecutor(max_workers=max(2, min(8, os.cpu_count() or 2))) as pool:
        futures = {name: pool.submit(_run, job) for name, job in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


class Answer:
    """What `king record check` did: exit status and the one JSON object it printed."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.status = proc.returncode
        stderr = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in stderr, stderr
        self.out: dict[str, Any] = json.loads(proc.stdout)  # one JSON object, always
        assert isinstance(self.out, dict)

    @property
    def error(self) -> dict[str, Any]:
        assert self.status == 1, self.out
        assert self.out["valid"] is False
        return self.out["error"]  # type: ignore[no-any-return]


def contains(expected: Any, actual: Any, where: str = "$") -> None:
    """Every key of `expected` is in `actual` with the same value (recursively)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: missing key {key!r}"
            contains(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (
            f"{where}: expected {len(expected)} items, got {actual!r}"
        )
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            contains(e, a, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: expected {expected!r}, got {actual!r}"


def write(directory: Path, name: str, document: object) -> str:
    path = directory / name
    if isinstance(document, bytes):
        path.write_bytes(document)
    else:
        path.write_text(json.dumps(document))
    return str(path)


# --- the conformance examples ---------------------------------------------------------------


@pytest.fixture(scope="module")
def conformance() -> dict[str, subprocess.CompletedProcess[bytes]]:
    jobs: dict[str, Job] = {p.stem: (str(p), None) for p in EXAMPLES}
    jobs["stdin:04-partial"] = ("-", (CONFORMANCE / "04-partial.json").read_bytes())
    return run_all(jobs)


@needs_shared
def test_there_are_conformance_examples() -> None:
    assert len(EXAMPLES) >= 17
    for example in EXAMPLES:
        assert example.with_name(example.stem + ".expected.json").exists()


@needs_shared
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_conformance_example(
    example: Path, conformance: dict[str, subprocess.CompletedProcess[bytes]]
) -> None:
    expected = json.loads(example.with_name(example.stem + ".expected.json").read_text())
    answer = Answer(conformance[example.stem])
    contains(expected, answer.out)
    assert answer.status == (0 if expected["valid"] else 1)
    if not expected["valid"]:
        code = expected["error"]["code"]
        if code in BOOK_RULE:
            assert answer.error["rule"] == BOOK_RULE[code]
        assert answer.error["message"]


@needs_shared
def test_standard_input_gives_the_same_answer_as_the_file(
    conformance: dict[str, subprocess.CompletedProcess[bytes]],
) -> None:
    from_file = Answer(conformance["04-partial"])
    from_stdin = Answer(conformance["stdin:04-partial"])
    assert from_file.status == 0
    assert (from_stdin.status, from_stdin.out) == (from_file.status, from_file.out)


# --- bad input: exit 2, malformed, no traceback ---------------------------------------------

HANDS = [
    ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"],
    ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH", "AH"],
    ["2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD"],
    ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"],
]
# A valid record (one no_tricks deal, no card played yet); each bad document changes one thing.
GOOD = {
    "format": "king-record/1",
    "deals": [{"hands": HANDS, "contract": "no_tricks", "plays": []}],
}


def changed(**top: Any) -> dict[str, Any]:
    doc = copy.deepcopy(GOOD)
    doc.update(top)
    return doc


def with_deal(**entry: Any) -> dict[str, Any]:
    doc = copy.deepcopy(GOOD)
    doc["deals"][0].update(entry)
    return doc


BAD_DOCUMENTS: dict[str, object] = {
    "not-json": b"{not json",
    "empty": b"",
    "whitespace-only": b"   \n",
    "not-utf8": b"\xff\xfe{}",
    "json-array": b"[]",
    "json-string": b'"king-record/1"',
    "json-null": b"null",
    "deeply-nested-array": b"[" * 100_000 + b"]" * 100_000,
    "deeply-nested-object": b'{"format": "king-record/1", "deals": [], "x": '
    + b'{"a": ' * 5000
    + b"1"
    + b"}" * 5001,
    "wrong-format": changed(format="king-record/2"),
    "no-format": {"deals": []},
    "deals-not-a-list": changed(deals={}),
    "unknown-rule-option": changed(rules={"no_such_option": True}),
    "bad-rule-value": changed(rules={"mode": "short10"}),
    "three-players": changed(players=["a", "b", "c"]),
    "unknown-card": with_deal(hands=[*HANDS[:3], [*HANDS[3][:12], "1C"]]),
    "unknown-card-in-plays": with_deal(plays=["ZZ"]),
    # Only the exact names of KING_RULES §1 are cards.
    "ten-written-10": with_deal(hands=[*HANDS[:3], [*HANDS[3][:8], "10C", *HANDS[3][9:]]]),
    "lower-case-card": with_deal(hands=[[c.lower() for c in HANDS[0]], *HANDS[1:]]),
    "lower-case-play": with_deal(plays=["2s"]),
    "card-with-spaces": with_deal(plays=[" 2S "]),
    "hand-of-12": with_deal(hands=[*HANDS[:3], HANDS[3][:12]]),
    "three-hands": with_deal(hands=HANDS[:3]),
    "duplicate-card": with_deal(hands=[*HANDS[:3], [*HANDS[3][:12], "AS"]]),
    "duplicate-in-one-hand": with_deal(hands=[*HANDS[:3], [*HANDS[3][:12], "2C"]]),
    "hands-missing-without-shuffle": {
        "format": "king-record/1",
        "deals": [{"contract": "no_tricks", "plays": []}],
    },
    "contract-not-a-string": with_deal(contract=7),
    "declarer-not-a-seat": with_deal(declarer=4),
    "seed-not-hex": changed(shuffle={"server_seed": "xyz", "game_id": "g"}),
}


@pytest.fixture(scope="module")
def bad_answers(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, subprocess.CompletedProcess[bytes]]:
    directory = tmp_path_factory.mktemp("bad-records")
    jobs: dict[str, Job] = {
        name: (write(directory, f"{name}.json", doc), None) for name, doc in BAD_DOCUMENTS.items()
    }
    jobs["good"] = (write(directory, "good.json", GOOD), None)
    jobs["missing-file"] = (str(directory / "no-such-record.json"), None)
    jobs["stdin-bad"] = ("-", b'{"format": ')
    jobs["stdin-good"] = ("-", json.dumps(GOOD).encode())
    return run_all(jobs)


def test_the_good_base_document_is_valid(
    bad_answers: dict[str, subprocess.CompletedProcess[bytes]],
) -> None:
    answer = Answer(bad_answers["good"])
    assert answer.status == 0 and answer.out["valid"] is True
    assert answer.out["deals"][0]["contract"] == "no_tricks"
    assert answer.out["deals"][0]["finished"] is False


@pytest.mark.parametrize("name", [*BAD_DOCUMENTS, "missing-file", "stdin-bad"])
def test_malformed_input_exits_2_with_a_json_error_and_no_traceback(
    name: str, bad_answers: dict[str, subprocess.CompletedProcess[bytes]]
) -> None:
    answer = Answer(bad_answers[name])
    assert answer.status == 2
    assert answer.out == {"valid": False, "error": answer.out["error"]}
    assert answer.out["error"]["code"] == "malformed"
    assert answer.out["error"]["message"]


def test_valid_standard_input(bad_answers: dict[str, subprocess.CompletedProcess[bytes]]) -> None:
    assert Answer(bad_answers["stdin-good"]).out == Answer(bad_answers["good"]).out


# --- record-level reason codes --------------------------------------------------------------


@cache
def _short12_text() -> str:
    state, _ = play_game("cli", PLAYERS, SEED, [first_legal] * 4, rules=Rules(mode="short12"))
    return json.dumps(to_record(state))


def short12() -> dict[str, Any]:
    """A whole short12 game (seed revealed, hands given) as a king-record/1 document."""
    doc: dict[str, Any] = json.loads(_short12_text())
    return doc


def whole_game() -> dict[str, Any]:
    return short12()


def hands_in_any_card_order() -> dict[str, Any]:
    doc = short12()
    for entry in doc["deals"]:
        entry["hands"] = [list(reversed(h)) for h in entry["hands"]]
    return doc


def shuffle_without_hands() -> dict[str, Any]:
    doc = short12()
    for entry in doc["deals"]:
        del entry["hands"]
    return doc


def hands_mismatch() -> dict[str, Any]:
    doc = short12()
    sh = doc["shuffle"]
    derived = deal_hands(bytes.fromhex(sh["server_seed"]), sh["game_id"], 1, 0, sh["client_seed"])
    hs = doc["deals"][0]["hands"]
    assert [set(h) for h in hs] == [set(names_of(m)) for m in derived]  # right so far
    hs[0][0], hs[1][0] = hs[1][0], hs[0][0]  # two cards change hands
    return doc


def deal_not_finished() -> dict[str, Any]:
    doc = short12()
    doc["deals"][2]["plays"] = doc["deals"][2]["plays"][:17]
    return doc


def bad_contract() -> dict[str, Any]:
    doc = short12()
    doc["deals"][0]["contract"] = "no_trump"
    return doc


def wrong_declarer() -> dict[str, Any]:
    doc = short12()
    doc["deals"][4]["declarer"] = (doc["deals"][4]["declarer"] + 2) % 4
    return doc


def deal_after_the_last() -> dict[str, Any]:
    doc = short12()
    extra = copy.deepcopy(doc["deals"][0])
    del extra["hands"]
    doc["deals"].append(extra)
    return doc


@cache
def _early_rifki_text() -> str:
    """Deal 1, rifki declared by seat 0: seat 3 leads AH at trick 2 and seat 0 must drop KH."""
    hs = hands("2S KH 3H ...", "3S ...", "2H ...", "4S AH 2D ...", fill_without={0: "H", 2: "S"})
    state = ok(start_deal(new_game(first_declarer="seat0"), hs), Declare(0, "rifki"))
    for name in ["2S", "3S", "2H", "4S", "AH", "KH"]:
        state = ok(state, Play(state.to_move, name))  # type: ignore[arg-type]
    return json.dumps(to_record(play_deal_out(state)))


def early_rifki() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_early_rifki_text())
    assert doc["rules"] == {"first_declarer": "seat0"}
    assert len(doc["deals"][0]["plays"]) == 8
    return doc


def card_after_the_early_end() -> dict[str, Any]:
    doc = early_rifki()
    doc["deals"][0]["plays"].append("2D")
    return doc


RECORDS: dict[str, Callable[[], dict[str, Any]]] = {
    f.__name__: f
    for f in (
        whole_game,
        hands_in_any_card_order,
        shuffle_without_hands,
        hands_mismatch,
        deal_not_finished,
        bad_contract,
        wrong_declarer,
        deal_after_the_last,
        early_rifki,
        card_after_the_early_end,
    )
}


@pytest.fixture(scope="module")
def record_answers(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, subprocess.CompletedProcess[bytes]]:
    directory = tmp_path_factory.mktemp("records")
    return run_all(
        {name: (write(directory, f"{name}.json", f()), None) for name, f in RECORDS.items()}
    )


@pytest.mark.parametrize("name", ["whole_game", "hands_in_any_card_order", "shuffle_without_hands"])
def test_a_whole_generated_game_is_valid(
    name: str, record_answers: dict[str, subprocess.CompletedProcess[bytes]]
) -> None:
    answer = Answer(record_answers[name])
    assert answer.status == 0
    assert answer.out["finished"] is True
    assert len(answer.out["deals"]) == 12
    assert len(answer.out["winners"]) >= 1 and len(answer.out["ladder_points"]) == 4
    assert answer.out == Answer(record_answers["whole_game"]).out


def test_an_early_end_is_a_finished_deal(
    record_answers: dict[str, subprocess.CompletedProcess[bytes]],
) -> None:
    answer = Answer(record_answers["early_rifki"])
    assert answer.status == 0
    first = answer.out["deals"][0]
    assert (first["tricks"], first["finished"], first["scores"]) == (2, True, [0, 0, 0, -320])
    assert answer.out["totals"] == [0, 0, 0, -320]


@pytest.mark.parametrize(
    ("name", "deal", "play", "code", "rule"),
    [
        ("hands_mismatch", 0, None, "hands_mismatch", "R-SHUFFLE"),
        ("deal_not_finished", 3, None, "deal_not_finished", "R-EARLYEND"),
        ("bad_contract", 0, None, "bad_contract", "R-TRUMP"),
        ("wrong_declarer", 4, None, "not_your_turn", "R-SEATS"),
        ("deal_after_the_last", 12, None, "game_over", "R-MODE"),
        ("card_after_the_early_end", 0, 8, "deal_over", "R-EARLYEND"),
    ],
)
def test_record_level_reason_codes(
    name: str,
    deal: int,
    play: int | None,
    code: str,
    rule: str,
    record_answers: dict[str, subprocess.CompletedProcess[bytes]],
) -> None:
    # Rule ids: hands_mismatch -> R-SHUFFLE is the natural one; for the others the rule book
    # names none, so these pin the engine's choice (see test_reason_codes.py).
    error = Answer(record_answers[name]).error
    assert (error["deal"], error["play"], error["code"], error["rule"]) == (deal, play, code, rule)
    assert error["message"]
    # For people, standard error says the indexes are 0-based positions in the document.
    said = record_answers[name].stderr.decode()
    assert f"deal entry {deal} (0-based index into deals" in said, said
    assert (f"play {play} (0-based index" if play is not None else "its declaration") in said


# --- closed, full and endless streams: exit 2 and a reason, never a traceback ---------------


def _run_shell(redirect: str, path: str) -> subprocess.CompletedProcess[bytes]:
    """`king record check PATH` with a shell redirection of its own streams (e.g. `<&-`)."""
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", *king_command(), "record", "check", path],
        capture_output=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


def test_closed_standard_input_is_malformed() -> None:
    answer = Answer(_run_shell("<&-", "-"))
    assert answer.status == 2
    assert answer.out["error"]["code"] == "malformed"
    assert "standard input is closed" in answer.out["error"]["message"]


@pytest.mark.parametrize(
    ("redirect", "reason"),
    [(">&-", "standard output is closed"), (">/dev/full", "No space left on device")],
)
def test_an_output_that_cannot_be_written_exits_2_with_one_line_on_stderr(
    tmp_path: Path, redirect: str, reason: str
) -> None:
    if redirect == ">/dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    proc = _run_shell(redirect, write(tmp_path, "good.json", GOOD))
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert stderr.count("\n") == 1 and reason in stderr


@pytest.mark.parametrize("redirect_and_path", [("", "/dev/zero"), ("</dev/zero", "-")])
def test_an_endless_source_stops_at_the_size_cap(redirect_and_path: tuple[str, str]) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    answer = Answer(_run_shell(*redirect_and_path))
    assert answer.status == 2
    assert answer.out["error"] == {"code": "malformed", "message": answer.out["error"]["message"]}
    assert "larger than 64 MiB" in answer.out["error"]["message"]
