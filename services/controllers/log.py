"""The transparency log (docs/TRANSPARENCY.md): signed checkpoints, the verifier key, proofs.

Independent verifiers and witnesses use exactly these paths; proofs are RFC 9162's, hashes
in base64. A proof at a size beyond what the tree covers first extends the tree over the
committed events; beyond the log it is refused (422).
"""

import asyncio
from typing import Annotated, Any

from litestar import Controller, Response, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Parameter

from eventstore.merkle import ProofError
from services.api_types import ConsistencyProof, InclusionProof
from services.controllers.deps import ServicesDep
from services.examples import LOG_CHECKPOINT, LOG_KEY
from services.openapi import answer, problems
from services.problems import Unprocessable
from services.tlog.service import TransparencyLog

TEXT = "text/plain"
MAX_INDEX = 2**62
Index = Annotated[int, Parameter(ge=0, le=MAX_INDEX)]


def text_answer(description: str, example: str) -> ResponseSpec:
    """A text/plain answer with its own example (not the metrics' text)."""
    return ResponseSpec(
        data_container=str,
        description=description,
        media_type=TEXT,
        generate_examples=False,
        examples=[Example(summary="example", value=example)],
    )


def _log(services: Any) -> TransparencyLog:
    log: TransparencyLog | None = services.tlog
    assert log is not None, "the transparency log is built with the services"
    return log


async def _proof(call: Any, *args: int) -> dict[str, object]:
    try:
        result: dict[str, object] = await asyncio.to_thread(call, *args)
    except ProofError as exc:
        raise Unprocessable(str(exc)) from None
    return result


class LogController(Controller):
    path = "/api/v1/log"
    tags = ("transparency log",)

    @get(
        "/checkpoint",
        media_type=TEXT,
        responses={200: text_answer("a C2SP signed note of a tlog-checkpoint", LOG_CHECKPOINT)},
    )
    async def log_checkpoint(self, services: ServicesDep) -> Response[str]:
        """The log's current checkpoint (origin, size, base64 root hash), signed with the
        log's Ed25519 key as a C2SP signed note. Not cached: it grows with every event."""
        note = await asyncio.to_thread(_log(services).checkpoint)
        return Response(note, media_type=TEXT, headers={"Cache-Control": "no-store"})

    @get(
        "/key",
        media_type=TEXT,
        responses={
            200: text_answer("the note verifier key <name>+<hex hash>+<base64 key>", LOG_KEY)
        },
    )
    async def log_key(self, services: ServicesDep) -> Response[str]:
        """The verifier key of the checkpoints' signatures: `<name>+<hex key hash>+<base64(0x01
        || Ed25519 public key)>`."""
        return Response(_log(services).key() + "\n", media_type=TEXT)

    @get(
        "/proof/inclusion",
        responses={
            200: answer(InclusionProof, "the leaf hash and its audit path"),
            **problems(422),
        },
    )
    async def log_inclusion_proof(
        self, services: ServicesDep, index: Index, size: Index
    ) -> dict[str, object]:
        """Leaf `index` (0-based: the event at global position index + 1) in the tree of
        `size` leaves: its hash and RFC 9162 audit path. 422 when index ≥ size or size is
        beyond the log."""
        log = _log(services)
        return await _proof(log.inclusion, index, size)

    @get(
        "/proof/consistency",
        responses={200: answer(ConsistencyProof, "the consistency proof"), **problems(422)},
    )
    async def log_consistency_proof(
        self, services: ServicesDep, first: Index, second: Index
    ) -> dict[str, object]:
        """The RFC 9162 proof that the tree of `second` leaves extends the tree of `first`.
        422 when first > second or second is beyond the log."""
        log = _log(services)
        return await _proof(log.consistency, first, second)
