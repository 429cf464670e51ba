"""Every relative link in README.md and docs/*.md names a file of this repository, and every
`#anchor` a heading of the file it points at (GitHub's heading ids). Links to other sites are
left alone; a link to a path outside the repository (`../shared/...`, `/home/...`) fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")
INLINE = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """The text without code blocks and inline code, where brackets are not links."""
    return CODE.sub("", FENCE.sub("", text))


def links(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return [m.group(1) for m in INLINE.finditer(text)] + REFERENCE.findall(text)


def anchors(path: Path) -> set[str]:
    """GitHub's ids for the file's headings: lower case, punctuation dropped, spaces to '-',
    a repeated heading numbered (`-1`, `-2`)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken(path: Path, target: str) -> str | None:
    """Why the link does not resolve, or None."""
    if SCHEME.match(target):
        return "a file: URL points outside the repository" if target.startswith("file:") else None
    file_part, _, anchor = target.partition("#")
    if file_part.startswith("/"):
        return "an absolute path: outside the repository"
    dest = (path.parent / file_part).resolve() if file_part else path
    if not dest.is_relative_to(ROOT):
        return "outside the repository"
    if not dest.exists():
        return "no such file"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"no heading #{anchor} in {dest.relative_to(ROOT)}"
    return None


def test_the_docs_have_links_to_check() -> None:
    assert sum(len(links(p)) for p in DOCS) >= 20


@pytest.mark.parametrize("path", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_every_relative_link_resolves_in_the_repository(path: Path) -> None:
    bad = [(t, why) for t in links(path) if (why := broken(path, t)) is not None]
    assert bad == [], f"{path.relative_to(ROOT)}: {bad}"


def test_the_checker_finds_what_it_should(tmp_path: Path) -> None:
    doc = ROOT / "docs" / "API.md"
    assert broken(doc, "BOTS.md") is None and broken(doc, "#values") is None
    assert broken(doc, "RECORD.md#the-document") is None
    assert broken(doc, "../README.md") is None and broken(doc, "https://example.org/") is None
    assert broken(doc, "KING_RULES.md") == "no such file"
    assert broken(doc, "../../shared/DESIGN.md") == "outside the repository"
    assert broken(doc, "/etc/passwd") == "an absolute path: outside the repository"
    assert broken(doc, "BOTS.md#no-such-heading") is not None
    assert [m.group(1) for m in INLINE.finditer(prose("[r](RULES.md), `[n](x.md)`"))] == [
        "RULES.md"
    ]
    page = tmp_path / "page.md"
    page.write_text("# A *b* `c`\n## Values\n## Values\n```\n# not a heading\n```\n")
    assert anchors(page) == {"a-b-c", "values", "values-1"}
