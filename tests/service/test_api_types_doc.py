"""docs/API.md lists every stream message type and its fields as services.api_types has them."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import msgspec.inspect as mi

from services.api_types.doc import STREAMS, markdown

API_MD = Path(__file__).resolve().parents[2] / "docs" / "API.md"


def _section(text: str) -> str:
    start = text.index("## Stream messages")
    end = text.find("\n## ", start + 1)
    return text[start : end + 1 if end >= 0 else len(text)]


def test_the_doc_holds_the_generated_stream_messages_section() -> None:
    assert _section(API_MD.read_text()) == markdown() + "\n", (
        "docs/API.md is behind services/api_types: paste `python -m services.api_types.doc` "
        "over its 'Stream messages' section"
    )


def test_the_doc_lists_every_message_type_of_every_stream_with_its_fields() -> None:
    section = _section(API_MD.read_text())
    for title, _, union in STREAMS:
        assert f"### {title}" in section
        for cls in get_args(union):
            info = mi.type_info(cls)
            assert isinstance(info, mi.StructType) and info.tag is not None
            rows = [line for line in section.splitlines() if line.startswith(f"| `{info.tag}` |")]
            assert rows, f"{info.tag} of {title} is not listed"
            data = next(f for f in info.fields if f.name == "data").type
            assert isinstance(data, mi.StructType)
            names = {f.name for f in data.fields}
            assert any(all(f"`{n}`" in row for n in names) for row in rows), (info.tag, names)
