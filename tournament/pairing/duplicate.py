"""Deal seeds for the games of a round, optionally duplicate (the same deals at every table).

The pure part only says *what* each table's server seed is derived from; the runner holds the
secret. Scheme `king-deal/1`:

    seed_input  = "king-deal/1|<tournament id>|<tournament seed>|round=<r>|table=<t>"
                  or, with duplicate deals, "…|round=<r>|duplicate" for every table
    server_seed = HMAC-SHA256(key = tournament secret, msg = UTF-8(seed_input))   (32 bytes)

The tournament secret is 32 bytes from the operating system's CSPRNG, sealed like a game seed
and never published (publishing it would disclose every later round); each game's derived
seed is committed to (SHA-256) in its first event and revealed after the game, as
king-shuffle/1 asks. HMAC keeps every derived seed as unpredictable as the secret.

king-shuffle/1 deals from (server seed, game id text, deal, attempt, client seed), so for the
same hands every table must shuffle with the same seed *and* the same id text: in duplicate
mode `shuffle_game_id` is shared by the round's tables (`<tournament id>-r<r>-dup`) while each table
keeps its own `game_id` (its stream); the runner passes it on as GameCreated.shuffle_id
(`GameRepository.create(..., server_seed=..., shuffle_id=...)`). Consequences the runner must
respect:
* the tables' commitments are equal (one seed), which is what proves they had the same deals;
* a table's seed must not be revealed, nor a finished deal's hands shown to spectators, until
  every table of the round has finished that game (resp. that deal): they share the cards;
* seat balance (tournament.pairing.seats) is what rotates the hands over an event: the same
  seat gets the same hand at every table of a round, and each player holds each seat about
  equally often, so each player holds each of a round's four hands about equally often.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from tournament.model import Round

SCHEME = "king-deal/1"


@dataclass(frozen=True, slots=True)
class DealPlan:
    """How one table's game gets its cards."""

    table: int
    game_id: str
    seed_input: str
    shuffle_game_id: str
    duplicate: bool


def table_game_id(tournament_id: str, round_no: int, table: int) -> str:
    """The game id (stream `game-<id>`) of a table: `<tournament>-r<round>-t<table>`."""
    return f"{tournament_id}-r{round_no}-t{table}"


def deal_plans(
    rnd: Round, tournament_id: str, seed: str, duplicate: bool = False
) -> tuple[DealPlan, ...]:
    """Each table's game id, seed derivation input and shuffle id (shared if duplicate)."""
    base = f"{SCHEME}|{tournament_id}|{seed}|round={rnd.number}|"
    plans = []
    for table in rnd.tables:
        gid = table_game_id(tournament_id, rnd.number, table.number)
        if duplicate:
            plans.append(
                DealPlan(
                    table.number,
                    gid,
                    base + "duplicate",
                    f"{tournament_id}-r{rnd.number}-dup",
                    True,
                )
            )
        else:
            plans.append(DealPlan(table.number, gid, base + f"table={table.number}", gid, False))
    return tuple(plans)


def derive_server_seed(secret: bytes, plan: DealPlan) -> bytes:
    """The game's 32-byte server seed: HMAC-SHA256 of the plan's input under the secret."""
    if len(secret) < 32:
        raise ValueError("the tournament secret must be at least 32 random bytes")
    return hmac.new(secret, plan.seed_input.encode("utf-8"), hashlib.sha256).digest()
