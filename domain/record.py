"""king-record/1: the portable game record — check one against the rules, or write one.

`check_record` is what `king record check` prints, as a pure function of the parsed JSON: it
replays the record through the same `decide`/`apply` as live games, so a record and a live game
can never disagree about the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from domain.cards import FULL_DECK, UnknownCard, card_name, cards_of, mask_of, parse_card
from domain.commands import AskRedeal, CreateGame, Declare, Play, RevealSeed, StartDeal
from domain.deal import scores as deal_scores
from domain.events import Event
from domain.game import CommandError, CompletedDeal, GameState, Phase, RedealtHands, run
from domain.results import points_number
from domain.rules import BadRuleOption, Rules
from domain.shuffle import ALGORITHM, commitment, deal_hands
from domain.violations import RULE_OF_CODE, Violation

FORMAT = "king-record/1"
# king-shuffle/1's server seed is 32 bytes (SHUFFLE.md), written as lower-case hex: anything
# else is no seed of that algorithm (a short one would only fail later as a misleading
# card_not_in_hand).
_SEED_HEX = re.compile(r"\A[0-9a-f]{64}\Z")
# The keys of a deal entry. GAME_RECORD.md says unknown top-level keys are ignored and is silent
# on deal entries; there a misspelt key ("declrer", "plyas") would silently drop a check or the
# plays and pass, so it is malformed. (Unknown keys of `shuffle` are ignored like top-level
# ones: a misspelt seed input fails anyway, as hands_mismatch or a missing seed.)
_ENTRY_KEYS = frozenset({"hands", "declarer", "contract", "redeal", "plays"})

# Codes the record format adds to the rule book's (GAME_RECORD.md).
RECORD_RULES = {
    "hands_mismatch": "R-SHUFFLE",
    "deal_not_finished": "R-EARLYEND",
}


class MalformedRecord(ValueError):
    """Not a king-record/1 document: wrong shapes, unknown cards or options, bad hands."""


@dataclass(frozen=True, slots=True)
class _Shuffle:
    seed: bytes
    game_id: str
    client_seed: str


@dataclass(frozen=True, slots=True)
class _Entry:
    hands: tuple[int, ...] | None
    declarer: int | None
    contract: str | None
    plays: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Record:
    rules: Rules
    players: tuple[str, ...]
    shuffle: _Shuffle | None
    deals: tuple[_Entry, ...]


def _parse_hands(raw: object, where: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) != 4:
        raise MalformedRecord(f"{where}: hands must be four lists of 13 cards")
    masks = []
    for seat, hand in enumerate(raw):
        if not isinstance(hand, list) or len(hand) != 13:
            raise MalformedRecord(f"{where}: hand {seat} must be a list of 13 cards")
        masks.append(mask_of(parse_card(c) for c in hand))
    union = 0
    for m in masks:
        union |= m
    if union != FULL_DECK or any(m.bit_count() != 13 for m in masks):
        raise MalformedRecord(f"{where}: the four hands must hold the 52 cards once each")
    return tuple(masks)


def _parse_entry(raw: object, i: int, shuffled: bool) -> _Entry:
    where = f"deals[{i}]"
    if not isinstance(raw, dict):
        raise MalformedRecord(f"{where} must be an object")
    _no_unknown_keys(raw, _ENTRY_KEYS, where)
    hands = _parse_hands(raw["hands"], where) if "hands" in raw else None
    if hands is None and not shuffled:
        raise MalformedRecord(f"{where}: hands are required when the record has no shuffle")
    declarer = raw.get("declarer")
    if "declarer" in raw and (type(declarer) is not int or not 0 <= declarer <= 3):
        raise MalformedRecord(f"{where}: declarer must be a seat 0-3")
    plays_raw = raw.get("plays", [])
    if not isinstance(plays_raw, list):
        raise MalformedRecord(f"{where}: plays must be a list of cards")
    plays = tuple(parse_card(c) for c in plays_raw)
    if raw.get("redeal") is True:
        if "contract" in raw or plays:
            raise MalformedRecord(f"{where}: a redeal entry has no contract and no plays")
        return _Entry(hands, declarer, None, ())
    if "redeal" in raw and raw["redeal"] is not False:
        raise MalformedRecord(f"{where}: redeal must be true or absent")
    contract = raw.get("contract")
    if not isinstance(contract, str):
        raise MalformedRecord(f"{where}: contract must be a string (or redeal: true)")
    return _Entry(hands, declarer, contract, plays)


def _no_unknown_keys(raw: dict[Any, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(repr(k) for k in raw if k not in known)
    if unknown:
        raise MalformedRecord(f"{where}: unknown key {', '.join(unknown)}")


def parse_record(doc: object) -> Record:
    """The record's parts, or MalformedRecord saying what is wrong."""
    try:
        return _parse(doc)
    except (UnknownCard, BadRuleOption) as exc:
        raise MalformedRecord(str(exc)) from None


def _parse(doc: object) -> Record:
    if not isinstance(doc, dict):
        raise MalformedRecord("a record is a JSON object")
    if doc.get("format") != FORMAT:
        raise MalformedRecord(f"format must be {FORMAT!r}")
    if "rules" in doc and not isinstance(doc["rules"], dict):  # optional, but an object if there
        raise MalformedRecord("rules must be an object of rule options")
    rules = Rules.from_dict(doc.get("rules"))
    players_raw = doc.get("players", ["seat 0", "seat 1", "seat 2", "seat 3"])
    if (
        not isinstance(players_raw, list)
        or len(players_raw) != 4
        or not all(isinstance(p, str) for p in players_raw)
    ):
        raise MalformedRecord("players must be four names")
    shuffle = None
    if "shuffle" in doc:
        sh = doc["shuffle"]
        if not isinstance(sh, dict):
            raise MalformedRecord("shuffle must be an object")
        if sh.get("algorithm", ALGORITHM) != ALGORITHM:
            raise MalformedRecord(f"shuffle.algorithm must be {ALGORITHM!r}")
        seed, game_id, client = sh.get("server_seed"), sh.get("game_id"), sh.get("client_seed", "")
        if not isinstance(seed, str) or not _SEED_HEX.match(seed):
            raise MalformedRecord("shuffle.server_seed must be 64 lower-case hex digits (32 bytes)")
        if not isinstance(game_id, str) or not isinstance(client, str):
            raise MalformedRecord("shuffle.game_id and shuffle.client_seed must be strings")
        shuffle = _Shuffle(bytes.fromhex(seed), game_id, client)
    deals_raw = doc.get("deals")
    if not isinstance(deals_raw, list):
        raise MalformedRecord("deals must be a list")
    deals = tuple(_parse_entry(d, i, shuffle is not None) for i, d in enumerate(deals_raw))
    return Record(rules, tuple(players_raw), shuffle, deals)


def _error(deal: int, play: int | None, v: Violation) -> dict[str, Any]:
    rule = RECORD_RULES.get(v.code) or RULE_OF_CODE[v.code]
    return {
        "valid": False,
        "error": {"deal": deal, "play": play, "code": v.code, "rule": rule, "message": v.message},
    }


def check_record(doc: object) -> tuple[int, dict[str, Any]]:
    """What `king record check` prints and its exit status: 0 valid, 1 illegal, 2 malformed."""
    try:
        record = parse_record(doc)
    except MalformedRecord as exc:
        return 2, {"valid": False, "error": {"code": "malformed", "message": str(exc)}}
    state, error = replay_record(record)
    if error is not None:
        return 1, error
    return 0, summary(state)


def replay_record(record: Record) -> tuple[GameState, dict[str, Any] | None]:
    """Play a parsed record through the core: the final state, and the first error if any."""
    return _replay(record, None, None)


def record_events(
    record: Record, game_id: str
) -> tuple[GameState, list[Event], dict[str, Any] | None]:
    """The events a game stream `game-<game_id>` holds for a parsed record, as the core
    decides them (created, dealt, declared, played, and the derived facts), the final state,
    and the first error as `check_record` gives it (then the events stop before it). A record
    with a shuffle whose game is over ends with the seed's reveal, as a game played here does:
    its audit then re-derives every hand from the seed."""
    events: list[Event] = []
    state, error = _replay(record, game_id, events)
    if error is None and record.shuffle is not None and state.phase is Phase.OVER:
        state, out = run(state, RevealSeed(record.shuffle.seed.hex()))
        assert not isinstance(out, Violation)  # the commitment is the seed's own
        events += out
    return state, events, error


def _replay(
    record: Record, game_id: str | None, sink: list[Event] | None
) -> tuple[GameState, dict[str, Any] | None]:
    sh = record.shuffle
    create = CreateGame(
        game_id=game_id or (sh.game_id if sh else "record"),
        shuffle_id=sh.game_id if sh else (game_id or "record"),
        players=record.players,
        rules=record.rules,
        commitment=commitment(sh.seed) if sh else "",
        client_seed=sh.client_seed if sh else "",
        shuffle=ALGORITHM if sh else "explicit",
    )
    state, created = run(GameState(), create)
    _keep(sink, created)
    for i, entry in enumerate(record.deals):
        if state.phase is Phase.PLAYING:
            v = Violation("deal_not_finished", "the previous deal has not ended")
            return state, _error(i, None, v)
        if state.phase is Phase.OVER:
            return state, _error(i, None, Violation("game_over", "the game is over"))
        hands = entry.hands
        if sh is not None:
            derived = deal_hands(sh.seed, sh.game_id, state.deal_no, state.attempt, sh.client_seed)
            if hands is not None and hands != derived:
                v = Violation(
                    "hands_mismatch",
                    f"the hands differ from king-shuffle/1 for deal {state.deal_no} "
                    f"attempt {state.attempt}",
                )
                return state, _error(i, None, v)
            hands = derived
        assert hands is not None  # parse_record requires hands without a shuffle
        try:
            state, dealt = run(state, StartDeal(hands))
            _keep(sink, dealt)
        except CommandError as exc:  # parse_record already checked the 52 cards
            raise MalformedRecord(str(exc)) from None
        if entry.declarer is not None and entry.declarer != state.declarer:
            v = Violation("not_your_turn", f"seat {state.declarer} declares this deal")
            return state, _error(i, None, v)
        command = (
            AskRedeal(state.declarer)
            if entry.contract is None
            else Declare(state.declarer, entry.contract)
        )
        state, out = run(state, command)
        if isinstance(out, Violation):
            return state, _error(i, None, out)
        _keep(sink, out)
        for j, c in enumerate(entry.plays):
            seat = state.to_move
            state, out = run(state, Play(seat if seat is not None else 0, c))
            if isinstance(out, Violation):
                return state, _error(i, j, out)
            _keep(sink, out)
    return state, None


def _keep(sink: list[Event] | None, out: list[Event] | Violation) -> None:
    if sink is not None and not isinstance(out, Violation):
        sink.extend(out)


def summary(state: GameState) -> dict[str, Any]:
    """The valid-record output of GAME_RECORD.md for a state."""
    deals: list[dict[str, Any]] = []
    for d in state.completed:
        if isinstance(d, RedealtHands):
            continue
        item: dict[str, Any] = {
            "declarer": d.declarer,
            "contract": d.contract.value,
            "tricks": len(d.tricks),
            "tricks_won": list(d.tricks_won),
            "scores": list(d.scores),
            "finished": True,
        }
        if d.void:
            item["void"] = True
        deals.append(item)
    if state.deal is not None:
        st = state.deal
        deals.append(
            {
                "declarer": st.declarer,
                "contract": st.contract.value,
                "tricks": st.tricks,
                "tricks_won": list(st.tricks_won),
                "scores": list(deal_scores(st)),
                "finished": st.over,
            }
        )
    result = state.result
    return {
        "valid": True,
        "deals": deals,
        "totals": list(state.totals),
        "finished": state.phase is Phase.OVER,
        "king": state.king,
        "winners": list(result.winners) if result else None,
        "ladder_points": [points_number(p) for p in result.ladder_points] if result else None,
    }


def to_record(state: GameState, *, public: bool = True) -> dict[str, Any]:
    """A king-record/1 document of a game.

    public=True writes only what anyone may see now: the deals that have ended (with their
    hands), and the seed once revealed. public=False (an operator's export) adds the deal in
    progress with its hands.
    """
    doc: dict[str, Any] = {
        "format": FORMAT,
        "rules": state.rules.changes(),
        "players": list(state.players),
    }
    if state.seed is not None:
        doc["shuffle"] = {
            "algorithm": ALGORITHM,
            "server_seed": state.seed,
            "game_id": state.shuffle_id,
            "client_seed": state.client_seed,
        }
    entries: list[dict[str, Any]] = []
    for d in state.completed:
        hands = [[card_name(c) for c in cards_of(h)] for h in d.hands]
        if isinstance(d, RedealtHands):
            entries.append({"hands": hands, "declarer": d.declarer, "redeal": True})
            continue
        assert isinstance(d, CompletedDeal)
        plays = [card_name(c) for t in d.tricks for c in t.cards]
        entries.append(
            {"hands": hands, "declarer": d.declarer, "contract": d.contract.value, "plays": plays}
        )
    if not public and state.deal is not None:
        st = state.deal
        played = [card_name(c) for t in state.tricks for c in t.cards]
        played += [card_name(c) for c in state.trick_cards]
        entries.append(
            {
                "hands": [[card_name(c) for c in cards_of(h)] for h in state.hands],
                "declarer": st.declarer,
                "contract": st.contract.value,
                "plays": played,
            }
        )
    doc["deals"] = entries
    return doc
