"""The project's copy of the conformance set must equal the published one when it is present."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OURS = REPO / "tests" / "conformance"
PUBLISHED = REPO.parent / "shared" / "conformance"


@pytest.mark.skipif(not PUBLISHED.is_dir(), reason=f"no published set at {PUBLISHED} to compare")
def test_the_copy_equals_the_published_set() -> None:
    published = {p.name: p.read_bytes() for p in PUBLISHED.glob("*.json")}
    ours = {p.name: p.read_bytes() for p in OURS.glob("*.json")}
    assert sorted(ours) == sorted(published)
    assert all(ours[name] == published[name] for name in published)
