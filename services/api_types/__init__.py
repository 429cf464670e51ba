"""Typed shapes of every dict-shaped answer and stream message of the API (msgspec Structs),
exactly as the service sends them today: a field's type, whether it may be null and what it
means, for the route decorators and the OpenAPI document. tests/service/test_api_types.py
decodes every answer and message of real games strictly against them.

| shape | where |
| --- | --- |
| `PublicView` | `view` of GET /api/v1/games/{id} (and of POST /api/v1/games, /start) |
| `SeatView` | `view` of GET /api/v1/games/{id}/seats/{seat}, POST .../actions, `your_turn` |
| `KingRecord` | GET /api/v1/games/{id}/record |
| `AuditReport` | GET /api/v1/games/{id}/audit |
| `GameAnalysis`, `AnalysisPending` | GET /api/v1/games/{id}/analysis, .../deals/{deal}/analysis |
| `list[StandingRow]` | GET /api/v1/tournaments/{id}/standings |
| `list[PairingsRound]` | GET /api/v1/tournaments/{id}/pairings |
| `RuleChanges` | `rules` of a table (GameOut) and a tournament (TournamentOut) |
| `Live`, `Ready` | GET /health/live, GET /health/ready |
| `InclusionProof`, `ConsistencyProof` | GET /api/v1/log/proof/inclusion, /consistency |
| `PublicGameMessage`, `SeatGameMessage`, `PlayerNotice`, `TournamentMessage` | the streams |
"""

from services.api_types.analysis import (
    AnalysisPending,
    CardAnalysis,
    DealAnalysis,
    DeclarationAnalysis,
    GameAnalysis,
)
from services.api_types.audit import AuditReport, ChainCheck, ReplayCheck
from services.api_types.common import (
    DeclareAction,
    LegalAction,
    PlayAction,
    RedealAction,
    RuleChanges,
    RuleOptions,
)
from services.api_types.health import Live, Ownership, Ready, ReadyChecks, SchedulerStatus
from services.api_types.invitations import InvitationOut
from services.api_types.log import ConsistencyProof, InclusionProof
from services.api_types.messages import (
    STREAMS,
    PlayerNotice,
    PublicGameMessage,
    SeatGameMessage,
)
from services.api_types.records import KingRecord, RecordDeal, RecordShuffle
from services.api_types.tournaments import PairingsRound, StandingRow, TournamentMessage
from services.api_types.views import EndedDeal, PublicView, SeatView, Trick

__all__ = [
    "STREAMS",
    "AnalysisPending",
    "AuditReport",
    "CardAnalysis",
    "ChainCheck",
    "ConsistencyProof",
    "DealAnalysis",
    "DeclarationAnalysis",
    "DeclareAction",
    "EndedDeal",
    "GameAnalysis",
    "InclusionProof",
    "InvitationOut",
    "KingRecord",
    "LegalAction",
    "Live",
    "Ownership",
    "PairingsRound",
    "PlayAction",
    "PlayerNotice",
    "PublicGameMessage",
    "PublicView",
    "Ready",
    "ReadyChecks",
    "RecordDeal",
    "RecordShuffle",
    "RedealAction",
    "ReplayCheck",
    "RuleChanges",
    "RuleOptions",
    "SchedulerStatus",
    "SeatGameMessage",
    "SeatView",
    "StandingRow",
    "TournamentMessage",
    "Trick",
]
