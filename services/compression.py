"""Response compression (gzip, through Litestar's middleware) for what is worth it: pages,
lists, records, audits, replays. Left out, by the handler's `opt`: event streams (each small
message would be framed and flushed on its own, and every seat's stream carries every event)
and the answer to an action (small, and on the path where a bot's time runs)."""

from __future__ import annotations

from typing import Any

from litestar.config.compression import CompressionConfig

OPT_KEY = "no_compression"
UNCOMPRESSED: dict[str, Any] = {OPT_KEY: True}


def compression_config() -> CompressionConfig:
    # Level 6 is zlib's default: nearly level 9's size at a fraction of its CPU.
    return CompressionConfig(
        backend="gzip", minimum_size=1024, gzip_compress_level=6, exclude_opt_key=OPT_KEY
    )
