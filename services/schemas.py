"""The API's request and reply shapes (msgspec Structs; never the ORM rows)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from domain.contracts import Contract
from services.api_types import InvitationOut, PublicView, RuleChanges, SeatView

PlayerId = Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9_-]{1,39}$", examples=["ada"])]
SeatOwner = Annotated[
    str,
    Meta(
        max_length=60, description="a player id, or house:<strategy>", examples=["house:heuristic"]
    ),
]
Seat = Annotated[int, Meta(ge=0, le=3)]


def shaped(shape: type, description: str) -> Meta:
    """A dict sent as the domain made it, documented as `shape` (a services.api_types Struct;
    tests/service/test_api_types.py decodes real answers strictly against every shape)."""
    ref = "#/components/schemas/" + shape.__name__
    return Meta(description=description, extra_json_schema={"$ref": ref})


PublicViewJSON = Annotated[dict[str, Any], shaped(PublicView, "what everyone may see now")]
SeatViewJSON = Annotated[dict[str, Any], shaped(SeatView, "what the seat may see now")]
RulesJSON = Annotated[
    dict[str, Any], shaped(RuleChanges, "the options that differ from the defaults")
]


class PlayerCreate(Struct, forbid_unknown_fields=True):
    id: PlayerId
    name: Annotated[str, Meta(min_length=1, max_length=100)] | None = None
    kind: Literal["human", "bot"] = "human"
    bot_url: Annotated[str, Meta(max_length=2000)] | None = None


class PlayerOut(Struct):
    id: str
    name: str
    kind: str
    bot_url: str | None
    created_at: datetime


class PlayerCreated(Struct):
    player: PlayerOut
    token: str


class BotUrlIn(Struct, forbid_unknown_fields=True):
    url: Annotated[str, Meta(max_length=2000)] | None


class TokenOut(Struct):
    token: str


ScopeName = Literal["read", "play", "bot"]
# Names are read up to 200 characters (normalising may shorten them) and passwords up to 1024,
# so that an over-long one is refused with its reason (422) rather than as a malformed body.
RawName = Annotated[str, Meta(min_length=1, max_length=200, examples=["ada"])]
Password = Annotated[str, Meta(min_length=1, max_length=1024, examples=["correct horse battery"])]


class SignUpIn(Struct, forbid_unknown_fields=True):
    name: RawName
    password: Password
    display_name: Annotated[str, Meta(max_length=200)] | None = None


class LogInIn(Struct, forbid_unknown_fields=True):
    name: RawName
    password: Password
    token_name: Annotated[str, Meta(min_length=1, max_length=60)] = "log-in"


class TokenInfoOut(Struct):
    """A token as its owner sees it: never its text, which was shown once."""

    id: str
    player: str
    name: str
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None


class TokenCreated(Struct):
    token: str
    info: TokenInfoOut


class AccountCreated(Struct):
    player: PlayerOut
    token: str
    info: TokenInfoOut


class TokenIn(Struct, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1, max_length=60)]
    scopes: Annotated[list[ScopeName], Meta(min_length=1, max_length=3)]
    player: (
        Annotated[str, Meta(max_length=40, description="one of your bots; default: you")] | None
    ) = None


VersionLabel = Annotated[
    str, Meta(min_length=1, max_length=60, examples=["2.1"], description="the version's label")
]


class BotIn(Struct, forbid_unknown_fields=True):
    name: RawName
    display_name: Annotated[str, Meta(max_length=200)] | None = None
    bot_url: Annotated[str, Meta(max_length=2000)] | None = None
    version: VersionLabel | None = None  # version 1's label (default "1")


class BotVersionIn(Struct, forbid_unknown_fields=True):
    """A bot's next version: its label and, if given, the push URL it plays at from now on
    (null: a pull bot); without `bot_url` the URL stays as it is."""

    label: VersionLabel
    bot_url: Annotated[str, Meta(max_length=2000)] | UnsetType | None = UNSET


class BotVersionOut(Struct):
    number: int
    label: str
    bot_url: str | None  # only for the bot, its owner and the admin
    created_at: datetime


class BotOut(Struct):
    id: str
    name: str
    kind: str
    bot_url: str | None
    created_at: datetime
    owner: str | None
    versions: list[BotVersionOut] = []  # oldest first (an account's bots only)


class AccountOut(Struct):
    player: PlayerOut
    bots: list[BotOut]
    tokens: list[TokenInfoOut]


class DisabledIn(Struct, forbid_unknown_fields=True):
    disabled: bool


class AccountStatusOut(Struct):
    player: str
    disabled: bool
    revoked_tokens: int


class RevokedOut(Struct):
    revoked_tokens: int


class GameCreate(Struct, forbid_unknown_fields=True):
    seats: Annotated[list[SeatOwner], Meta(min_length=4, max_length=4)]
    rules: Annotated[dict[str, Any], Meta(description="rule options of docs/RULES.md")] = {}
    decision_seconds: Annotated[float, Meta(ge=0.05, le=3600)] | None = None
    client_seed: Annotated[str, Meta(max_length=200)] = ""
    id: Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")] | None = None
    start: bool = True
    invitation_seconds: (
        Annotated[
            float,
            Meta(
                ge=10, le=86400, description="how long the invitations to other players stay open"
            ),
        ]
        | None
    ) = None


class GameOut(Struct):
    id: str
    status: Annotated[str, Meta(examples=["live"], description="created, live or over")]
    seats: list[str]
    rules: RulesJSON
    decision_seconds: float
    client_seed: str
    created_by: str
    created_at: datetime


class GameDetail(Struct):
    game: GameOut
    view: PublicViewJSON | None
    version: int


class MyInvitations(Struct):
    received: list[InvitationOut]
    sent: list[InvitationOut]


class TableDetail(GameDetail):
    """A table just set: the game, and the invitations it sent (it starts once they are all
    accepted)."""

    invitations: list[InvitationOut] = []


CardName = Annotated[
    str, Meta(pattern="^[2-9TJQKA][SHDC]$", description="rank then suit", examples=["QS"])
]
ActionSeat = Annotated[
    Seat | None,
    Meta(description="the seat acting: needed only by a token holding two seats of the table"),
]
ActionVersion = Annotated[
    Annotated[int, Meta(ge=0)] | None,
    Meta(
        description=(
            "the game version the action answers (the view's `version`): an action for an "
            "older version is refused (409) instead of being decided on a newer state"
        )
    ),
]


class PlayIn(Struct, tag_field="type", tag="play", forbid_unknown_fields=True):
    """Play a card."""

    card: CardName
    seat: ActionSeat = None
    version: ActionVersion = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": "play", "card": self.card}


class DeclareIn(Struct, tag_field="type", tag="declare", forbid_unknown_fields=True):
    """Declare the deal's contract (the declarer only)."""

    contract: Contract
    seat: ActionSeat = None
    version: ActionVersion = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": "declare", "contract": self.contract.value}


class RedealIn(Struct, tag_field="type", tag="redeal", forbid_unknown_fields=True):
    """Ask for a redeal of a weak hand (where the rules allow it)."""

    seat: ActionSeat = None
    version: ActionVersion = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": "redeal"}


# One body per kind of action, told apart by `type`: a play without a card, or a declaration
# without a contract, does not fit the document (400) rather than reaching the rules.
ActionIn = PlayIn | DeclareIn | RedealIn


class StrikeOut(Struct):
    seat: int
    reason: str
    count: int
    forfeited: bool
    default_action: (
        Annotated[
            dict[str, str],
            Meta(
                description="the move played for the seat (none when the strike forfeits it)",
                extra_json_schema={
                    "oneOf": [
                        {"$ref": "#/components/schemas/" + name}
                        for name in ("PlayAction", "DeclareAction", "RedealAction")
                    ]
                },
            ),
        ]
        | None
    )


class ActionOut(Struct):
    """An accepted action: the seat, the game's version after it, and the seat's new view
    (null when the request said `Prefer: return=minimal`)."""

    ok: bool
    seat: int
    version: int
    view: SeatViewJSON | None
    strike: StrikeOut | None = None


class SeatViewOut(Struct):
    game_id: str
    seat: int
    version: int
    deadline: str | None
    view: SeatViewJSON


class ValidationError(Struct, omit_defaults=True):
    """One reason a request did not fit the document: what was wrong, and where."""

    message: str
    key: str | None = None
    source: str | None = None


class Problem(Struct, omit_defaults=True):
    """RFC 9457 problem details. `type` is one stable URI per kind of problem and `code` a
    machine-readable reason; a rules refusal adds the rule id, its message and the strike it
    cost, a request that does not fit the document every reason in `errors`."""

    type: Annotated[str, Meta(examples=["https://king.example/problems/illegal-action"])]
    title: str
    status: Annotated[int, Meta(ge=400, le=599)]
    detail: str
    code: Annotated[str, Meta(examples=["must_follow_suit"])]
    rule: Annotated[str, Meta(examples=["R-FOLLOW"])] | None = None
    message: str | None = None
    strike: StrikeOut | None = None
    errors: list[ValidationError] | None = None
    # The id of the request that got this answer (its X-Request-ID): quote it when reporting.
    request_id: Annotated[str, Meta(examples=["4bf92f3577b34da6a3ce929d0e0e4736"])] | None = None


class RecordProblem(Problem, omit_defaults=True):
    """A record refused by an import: the checker's `deal` and `play` (either may be null:
    `play` for a declaration, `deal` for a whole-record reason), and the game id if known."""

    deal: int | UnsetType | None = UNSET
    play: int | UnsetType | None = UNSET
    game_id: str | None = None


class ImportedGameOut(Struct):
    """A game stored from a king-record/1 made elsewhere: not a table here (no time limit, no
    creator), `origin` names where it came from. `status`: `over`, or `unfinished` (a record
    of a game's first deals; nobody plays it on here)."""

    id: str
    status: str
    seats: list[str]
    rules: dict[str, Any]
    client_seed: str
    origin: str
    imported_at: datetime


class ImportedGameDetail(Struct):
    game: ImportedGameOut
    view: dict[str, Any] | None
    version: int


class RecordImported(Struct):
    """One record stored (`stored`) or found stored already with the same content."""

    game_id: str
    status: Literal["stored", "already_stored"]
    origin: str | None
    finished: bool


class RecordImportLine(Struct, omit_defaults=True):
    """What became of one line of an NDJSON import: `error` when `refused`."""

    line: int
    status: Literal["stored", "already_stored", "refused"]
    game_id: str | None = None
    origin: str | None = None
    error: dict[str, Any] | None = None


class RecordImportReport(Struct):
    """An NDJSON import, record by record. `complete` is false when the body held more
    records than one request takes (the rest was not read)."""

    origin: str
    stored: int
    already_stored: int
    refused: int
    complete: bool
    results: list[RecordImportLine]
