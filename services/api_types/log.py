"""The answers of the transparency log's proof endpoints (services.controllers.log)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from services.api_types.common import Shape

Hash = Annotated[str, Meta(description="a SHA-256 hash in base64 (44 characters)")]


class InclusionProof(Shape):
    """GET /api/v1/log/proof/inclusion: leaf `index` (the event at position index + 1) in the
    tree of `size` leaves (RFC 9162 2.1.3)."""

    index: Annotated[int, Meta(ge=0)]
    size: Annotated[int, Meta(ge=1)]
    leaf_hash: Hash
    proof: Annotated[list[Hash], Meta(description="the audit path, from the leaf upwards")]


class ConsistencyProof(Shape):
    """GET /api/v1/log/proof/consistency: the tree of `second` leaves extends the tree of
    `first` (RFC 9162 2.1.4)."""

    first: Annotated[int, Meta(ge=0)]
    second: Annotated[int, Meta(ge=0)]
    proof: list[Hash]
