"""Ended deals' analyses in the database (`king_deal_analyses`), shared by every process.

An ended deal never changes, so its analysis is written once under the hash of everything it
depends on and read by any replica: a deal costs its 5-10 s of solving once per database, not
once per process. Writes race harmlessly (the same key means the same analysis): the first wins.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Engine, Table, insert, select
from sqlalchemy.exc import IntegrityError

from services.db.models import DealAnalysisRow

TABLE: Table = DealAnalysisRow.__table__  # type: ignore[attr-defined]


def key_hash(key: tuple[object, ...]) -> str:
    """The row key of an analysis key (its parts as canonical JSON, hashed)."""
    return hashlib.sha256(orjson.dumps(list(key))).hexdigest()


class AnalysisStore:
    """Read and write analyses (blocking)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def read(self, keys: Collection[str]) -> dict[str, dict[str, Any]]:
        """The stored analyses of these row keys (`key_hash`), by row key; a key not stored is
        left out. Only these rows are read and decompressed (not the game's others)."""
        if not keys:
            return {}
        query = select(TABLE.c.key, TABLE.c.body).where(TABLE.c.key.in_(sorted(set(keys))))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return {row.key: orjson.loads(zlib.decompress(row.body)) for row in rows}

    def save(self, key: str, game_id: str, analysis: dict[str, Any]) -> bool:
        """Keep the analysis; False when another process kept it first."""
        values = {
            "key": key,
            "game_id": game_id,
            "body": zlib.compress(orjson.dumps(analysis)),
            "created_at": datetime.now(UTC),
        }
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(TABLE), values)
        except IntegrityError:
            return False
        return True
