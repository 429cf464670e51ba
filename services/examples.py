"""One example per documented shape, for the OpenAPI document (services.openapi).

Each example is an instance of its msgspec Struct, so it cannot drift from the shape: a field
renamed or retyped fails here, at the document's first build, not in a reader's client. The
views and the record come from a short game the rules engine plays (deal 1 of a short12
table, first legal move each time), so they are what the service would send for that game.

`EXAMPLES` maps a component's name (the Struct's name) to its example as JSON values;
`PARAMETERS` an interesting parameter's name to an example value; `problem_example(status)`
gives a problem body of the kind that status answers.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import msgspec

from domain.commands import Declare
from domain.contracts import Contract
from domain.game import GameState, run
from domain.playout import deal_if_due, new_game
from domain.record import to_record
from domain.rules import Rules
from domain.view import legal_actions, public_view, seat_view
from services import api_types as t
from services import schemas as s
from services.api_types import (
    analysis,
    audit,
    health,
    log,
    messages,
    records,
    tournaments,
    views,
)
from services.problems import KINDS, kind_of, problem_body

GAME = "g-3f9a1c07b2d4"
PLAYERS = ("ada", "house:heuristic", "house:heuristic", "house:random")
SEED = bytes(range(32))
CLIENT_SEED = "ada's lucky seed"
AT = datetime(2030, 1, 1, 18, 0, tzinfo=UTC)
TOKEN = "king_" + "x" * 43  # the form of a token, never a real one
INVITATION = "inv-5e0c2a9b7d41f683"
TOURNAMENT = "spring-open"
TABLE = "t-5b2f0c9e8a71"

PARAMETERS: dict[str, Any] = {
    "game_id": GAME,
    "seat": 0,
    "player_id": "ada",
    "invitation_id": INVITATION,
    "table_id": TABLE,
    "tournament_id": TOURNAMENT,
    "token_id": "t5e0c2a9b7d41f683",
    "bot_id": "ada-bot",
    "round_no": 2,
    "deal": 1,
    "after": 5,
    "player": "ada",
    "tournament": TOURNAMENT,
    "since": "2030-01-01T00:00:00Z",
    "until": "2030-02-01T00:00:00Z",
    "Idempotency-Key": "3b1f6c0e-a2d4-4c8e-9f7a-5d2e1b0c9a86",
}


def _played(state: GameState, moves: int) -> GameState:
    """`moves` more first-legal moves (deals dealt as due)."""
    for _ in range(moves):
        state, _events = deal_if_due(state, SEED)
        assert state.to_move is not None
        action = legal_actions(state, state.to_move)[0]
        state, out = run(state, action.command(state.to_move))
        assert isinstance(out, list)
    return state


def _game() -> tuple[GameState, GameState]:
    """The example table mid-trick (a trick and a card played) and after its first deal."""
    rules = Rules.from_dict({"mode": "short12"})
    state, _ = new_game(GAME, PLAYERS, SEED, rules, CLIENT_SEED)
    state, _ = deal_if_due(state, SEED)
    assert state.declarer is not None
    state, _ = run(state, Declare(state.declarer, "no_hearts"))
    mid = _played(state, 5)
    ended = mid
    while len(ended.completed) < 1:
        ended = _played(ended, 1)
    return mid, ended


def _json(value: Any) -> Any:
    return msgspec.to_builtins(value)


@cache
def examples() -> dict[str, Any]:
    """Every shape's example, by component name (built once, at the document's first build)."""
    mid, ended = _game()
    public = msgspec.convert(public_view(mid).to_dict(), views.PublicView)
    assert mid.to_move is not None
    seat = msgspec.convert(seat_view(mid, mid.to_move).to_dict(), views.SeatView)
    record = msgspec.convert(to_record(ended), records.KingRecord)
    rule_changes = t.RuleChanges(mode="short12")
    invitation = t.InvitationOut(
        id=INVITATION,
        game_id=GAME,
        inviter="bora",
        invitee="ada",
        seats=[0],
        status="pending",
        reason=None,
        start=True,
        created_at=AT,
        expires_at=AT + timedelta(minutes=10),
        answered_at=None,
        players=["ada", "bora", "house:heuristic", "house:random"],
        rules={"mode": "short12"},
        decision_seconds=30.0,
        game_status="created",
    )
    player = s.PlayerOut("ada", "Ada", "human", None, AT)
    token_info = s.TokenInfoOut(
        "t5e0c2a9b7d41f683", "ada-bot", "spring open", ["bot", "read"], AT, AT
    )
    url = "https://bots.example.org/king"
    version = s.BotVersionOut(2, "2.1 deeper search", url, AT + timedelta(days=3))
    versions = [s.BotVersionOut(1, "1", url, AT), version]
    bot = s.BotOut("ada-bot", "Ada's bot", "bot", url, AT, "ada", versions)
    game = s.GameOut(GAME, "live", list(PLAYERS), _json(rule_changes), 30.0, CLIENT_SEED, "ada", AT)
    detail = s.GameDetail(game, _json(public), 9)
    deal_started = messages.DealStartedData(1, 0, public.declarer or 0)
    ts_player = _tournament_player()
    tournament = _tournament(ts_player)
    shapes: list[Any] = [
        player,
        s.PlayerCreate("ada", "Ada"),
        s.PlayerCreated(player, TOKEN),
        s.TokenOut(TOKEN),
        s.BotUrlIn("https://bots.example.org/king"),
        s.SignUpIn("ada", "correct horse battery", "Ada"),
        s.LogInIn("ada", "correct horse battery", "laptop"),
        token_info,
        s.TokenCreated(TOKEN, token_info),
        s.AccountCreated(player, TOKEN, token_info),
        s.TokenIn("my bot in the spring open", ["read", "bot"], "ada-bot"),
        s.BotIn("ada-bot", "Ada's bot", "https://bots.example.org/king", "1.0"),
        s.BotVersionIn("2.1 deeper search", url),
        version,
        bot,
        s.AccountOut(player, [bot], [token_info]),
        s.DisabledIn(True),
        s.AccountStatusOut("ada", True, 3),
        s.RevokedOut(1),
        game,
        s.GameCreate(list(PLAYERS), {"mode": "short12"}, 30.0, CLIENT_SEED),
        detail,
        s.TableDetail(
            s.GameOut(
                GAME, "created", list(invitation.players), {"mode": "short12"}, 30.0, "", "bora", AT
            ),
            None,
            1,
            [invitation],
        ),
        s.ImportedGameDetail(
            s.ImportedGameOut(
                "r-8c1e5a9f0b3d",
                "unfinished",
                list(PLAYERS),
                {"mode": "short12"},
                "",
                "club-archive",
                AT,
            ),
            _json(public),
            9,
        ),
        s.SeatViewOut(GAME, seat.seat, 9, "2030-01-01T18:02:30.000Z", _json(seat)),
        s.ActionOut(True, seat.seat, 10, _json(seat)),
        s.PlayIn(next(a.card for a in seat.legal if isinstance(a, t.PlayAction)), version=9),
        s.DeclareIn(Contract("no_queens"), seat=0, version=3),
        s.RedealIn(version=3),
        s.RecordImported("r-8c1e5a9f0b3d", "stored", "club-archive", False),
        s.RecordImportReport(
            "club-archive", 1, 0, 0, True, [s.RecordImportLine(1, "stored", "r-8c1e5a9f0b3d")]
        ),
        s.MyInvitations([invitation], []),
        invitation,
        record,
        public,
        seat,
        audit.AuditReport(
            GAME,
            True,
            61,
            False,
            audit.ChainCheck(True, 61, None, None),
            audit.ReplayCheck(True, False, 1, None, None, None, []),
        ),
        _analysis(),
        analysis.AnalysisPending(GAME, "computing", 3, 12),
        log.InclusionProof(3, 2291, _hash(0), [_hash(i) for i in range(1, 5)]),
        log.ConsistencyProof(1520, 2291, [_hash(i) for i in range(5, 10)]),
        health.Live("ok"),
        health.Ready(
            "ok",
            health.ReadyChecks("ok", "ok", "ok", "ok"),
            [],
            health.Ownership("host-1:4711", 3, 0, 3, {"host-1:4711": 3}, 1, 0, 7.0),
            health.SchedulerStatus(True, True, "host-1:4711"),
        ),
        messages.DealStartedMessage(2, GAME, deal_started),
        messages.SeatDealStartedMessage(
            2,
            GAME,
            messages.SeatDealStartedData(1, 0, deal_started.declarer, _hand(ended, 0)),
        ),
        messages.GameStartedNotice(
            f"{GAME}:started",
            GAME,
            messages.GameStartedNoticeData(GAME, "ada", [0], list(PLAYERS)),
        ),
        tournaments.TournamentCreatedMessage(
            1,
            TOURNAMENT,
            "2030-01-01T17:00:00.000Z",
            tournaments.TournamentCreatedData(
                TOURNAMENT,
                "Spring Open",
                "swiss",
                5,
                "bye",
                "0",
                False,
                "",
                rule_changes,
                "heuristic",
            ),
        ),
        tournaments.StandingRow(1, "ada", "3/2", "1.50", 412, "1/2", "0.50", 2, 3, 0, "0", 0),
        tournaments.PairingsRound(
            1,
            [tournaments.PairedTable(1, GAME, ["ada", "bora", "cem", "deniz"], [])],
            [],
            True,
            False,
            tournaments.PairingRoundDoc(
                1, [tournaments.RoundTable(1, ["ada", "bora", "cem", "deniz"], [])], []
            ),
            None,
        ),
        *tournament,
        *_lobby(invitation, tournament[0]),
    ]
    return {type(shape).__name__: _json(shape) for shape in shapes}


def _lobby(invitation: t.InvitationOut, tournament: Any) -> list[Any]:
    """The lobby's shapes (the request and answer Structs live with their controller)."""
    from services.api_types import lobby as m
    from services.controllers import lobby as c

    table = m.LobbyTableOut(
        TABLE,
        "open",
        "ada",
        ["ada", None, "house:heuristic", "house:heuristic"],
        [1],
        {"mode": "short12"},
        30.0,
        None,
        None,
        2,
        AT,
    )
    started = m.LobbyTableOut(
        GAME,
        "started",
        "ada",
        ["ada", "house:heuristic", "house:heuristic", "house:heuristic"],
        [],
        {},
        30.0,
        GAME,
        f"/play/{GAME}",
        2,
        AT,
    )
    registering = msgspec.structs.replace(tournament, status="registering", started=False)
    return [
        table,
        c.LobbyTableCreate(
            ["person", "person", "house:heuristic", "house:heuristic"], 0, {"mode": "short12"}, 30.0
        ),
        c.QuickGameIn("heuristic"),
        c.QuickGameOut(started, GAME, 0, f"/play/{GAME}"),
        c.LobbyOut([table], [invitation], [registering], 2291),
        m.TableOpenedMessage(2291, TABLE, table),
    ]


def _analysis() -> analysis.GameAnalysis:
    """An analysis of deal 1 (two of its cards shown), in the shape the service sends."""
    cards = [
        analysis.CardAnalysis(1, 1, "2S", ["2S", "3S"], 0, None, -60, -60, False, False),
        analysis.CardAnalysis(1, 2, "QS", ["5S"], 100, "mistake", -240, -140, False, False),
    ]
    declaration = analysis.DeclarationAnalysis(
        1,
        "no_hearts",
        -95.5,
        "no_queens",
        -62.0,
        False,
        {"no_tricks": -180.0, "no_hearts": -95.5, "no_queens": -62.0, "no_boys": -120.0},
        "expert",
    )
    deal = analysis.DealAnalysis(1, 0, "no_hearts", 1, False, cards, declaration)
    return analysis.GameAnalysis(GAME, 1, list(PLAYERS), "paranoid", 5000, "expert", False, [deal])


def _hand(state: GameState, seat: int) -> list[str]:
    """Seat's hand as dealt in the state's first ended deal."""
    return list(to_record(state)["deals"][0]["hands"][seat])


def _tournament_player() -> Any:
    from services.controllers.tournaments import TournamentPlayerOut

    return TournamentPlayerOut("ada", "Ada", "human", True)


def _tournament(player: Any) -> list[Any]:
    """The tournament shapes (their Structs live with their controller)."""
    from services.controllers import tournaments as c

    out = c.TournamentOut(
        id=TOURNAMENT,
        name="Spring Open",
        status="running",
        format="swiss",
        rounds=5,
        fill="house_bot",
        bye_points="0",
        duplicate=False,
        seed="",
        rules={"mode": "short12"},
        house_strategy="heuristic",
        start_at=AT,
        decision_seconds=30.0,
        round_minutes=None,
        next_round_at=None,
        started=True,
        paused=False,
        current_round=1,
        rounds_closed=0,
        players=[player, c.TournamentPlayerOut("bora", "Bora", "bot", True)],
        winners=[],
        manual_pairing=None,
        version=7,
    )
    seats = ["ada", "bora", "house-bot-1", "house-bot-2"]
    return [
        out,
        c.TournamentDetail(
            out, [c.RoundOut(1, [c.TableOut(1, GAME, seats, [2, 3], False)], [], False, False)]
        ),
        c.TournamentCreate(
            name="Spring Open",
            rounds=5,
            rules={"mode": "short12"},
            fill="house_bot",
            players=[c.TournamentPlayerIn(player="ada"), c.TournamentPlayerIn(strategy="random")],
        ),
        c.RegisterIn(strategy="heuristic"),
        c.ReasonIn("a break for lunch"),
        c.ManualPairingIn([seats]),
        c.LeaderboardOut(1, "house:heuristic", "heuristic", "strategy", 240, 31.2, 1.1, 27.9),
    ]


# A few text answers that are no JSON shape.
TEXT: dict[str, str] = {
    "text/csv": "rank,player,ladder,game_points,table_mates,wins,games,byes,forfeits,"
    "ladder_exact,table_mates_exact\n1,ada,1.50,412,0.50,2,3,0,0,3/2,1/2\n",
    "text/plain": "# HELP king_http_requests_total HTTP requests answered\n"
    "# TYPE king_http_requests_total counter\n"
    'king_http_requests_total{method="GET",status="200"} 1027\n',
}


def _hash(i: int) -> str:
    """The form of a base64 SHA-256 hash (an example's, not a real tree's)."""
    return base64.b64encode(hashlib.sha256(b"example %d" % i).digest()).decode()


LOG_CHECKPOINT = (
    "king.local/log\n2291\noaIwE6C0AnVfLVoruPD9+Zwvec7iKCndhpzGo3/ZddI=\n\n"
    "\u2014 king.local/log OLuPR3MSs5RQVpdEVn+ln/86N9WwEK3vxLI+yV2qfSkbY2r57TFmo7/0lWLlJwq4tSVk"
    "+2ZFby/WkA9Pi+0XKpCERgk=\n"
)
LOG_KEY = "king.local/log+38bb8f47+AWCwdz3ktR1q4dG2WLcYwXInpK+u3yU9vGJ3llb6PxO1\n"


def unready(ready: dict[str, Any]) -> dict[str, Any]:
    """GET /health/ready's 503: the example's checks with the database failing."""
    checks = {**ready["checks"], "database": "failing: connection refused"}
    return {**ready, "status": "unavailable", "checks": checks}


def import_body() -> dict[str, Any]:
    """POST /api/v1/records's body: the example record (one document)."""
    record: dict[str, Any] = examples()["KingRecord"]
    return record


# The problem an operation's answer of a status most often is, where it is not the status's
# general kind: (operationId, status) -> (kind, code, detail).
OWN_PROBLEMS: dict[tuple[str, int], tuple[str, str, str]] = {
    ("createGame", 422): ("bad-table", "bad_table", "seat 2 names no player: zed"),
    ("startGame", 409): (
        "invitations-pending",
        "invitations_pending",
        "bo has not accepted the invitation yet",
    ),
    ("signUp", 409): ("conflict", "name_taken", "that name is taken"),
    ("signUp", 422): ("unprocessable", "weak_password", "a password has at least 10 characters"),
    ("createMyBot", 409): ("conflict", "name_taken", "that name is taken"),
    ("createMyToken", 422): (
        "unprocessable",
        "bad_scopes",
        "a bot's token has scopes among bot, read",
    ),
    ("createPlayer", 422): ("bad-bot-url", "bad_bot_url", "the bot URL names a private address"),
    ("setMyBotUrl", 422): ("bad-bot-url", "bad_bot_url", "the bot URL names a private address"),
    ("importRecords", 400): ("bad-record", "malformed", "the body is not JSON"),
    ("getDealAnalysis", 409): (
        "conflict",
        "deal_not_ended",
        "deal 3 is in play: it is analysed once it has ended",
    ),
    ("importRecords", 422): ("record-refused", "must_follow_suit", "deal 1, play 6: R-FOLLOW"),
    ("openLobbyTable", 422): ("bad-table", "bad_table", "seat 2 ('house:nope'): no strategy"),
    ("quickGame", 422): ("bad-table", "bad_table", "seat 1 ('house:nope'): no strategy"),
    ("openLobbyTable", 409): (
        "conflict",
        "too_many_tables",
        "ada has 5 open tables already: cancel one or wait for one to start",
    ),
    ("quickGame", 409): (
        "conflict",
        "too_many_tables",
        "ada has 5 open tables already: cancel one or wait for one to start",
    ),
    **{
        (op, 409): ("conflict", "table_full", f"table {TABLE} is full: its game is starting")
        for op in ("joinLobbyTable", "leaveLobbyTable", "cancelLobbyTable")
    },
    **{
        (op, 409): ("invitation-closed", "invitation_closed", "the invitation was declined")
        for op in ("acceptInvitation", "declineInvitation", "cancelInvitation")
    },
}
DETAILS = {
    400: "the body does not fit the document: Expected `int`, got `str` - at `$.seat`",
    401: "this needs a token (Authorization: Bearer <token>) or a logged-in session",
    403: "this needs the admin token",
    404: f"no game {GAME!r}",
    409: "the action answers version 8; the game is at version 9",
    413: "the body is larger than the service accepts",
    415: "the body must be JSON (Content-Type: application/json), not text/plain",
    422: "seat 2 must follow the suit led",
    429: "over the rate limit: retry after 1 s",
    503: "the database is busy; send the request again",
}


def problem_example(status: int, operation_id: str = "") -> Any:
    """A problem body of the kind the operation's answer of `status` is: its own kind where
    OWN_PROBLEMS names one, else the status's general kind (a rules refusal for a 422 of
    submitAction)."""
    own = OWN_PROBLEMS.get((operation_id, status))
    if own is not None:
        kind, code, detail = own
        return _json(problem_body(status, KINDS[kind][1], detail, kind=kind, code=code))
    kind = kind_of(status)
    detail = DETAILS.get(status, KINDS[kind][1])
    extra: dict[str, Any] = {}
    if status == 400:
        errors = [s.ValidationError("Expected `int`, got `str` - at `$.seat`", "data", "body")]
        extra = {"code": "invalid_request", "errors": errors}
    if (operation_id, status) == ("submitAction", 422):
        kind = "illegal-action"
        extra = {"code": "must_follow_suit", "rule": "R-FOLLOW", "message": detail}
    return _json(problem_body(status, KINDS[kind][1], detail, kind=kind, **extra))


__all__ = ["PARAMETERS", "TEXT", "examples", "import_body", "problem_example", "unready"]
