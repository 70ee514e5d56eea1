"""The README stays short and the docs stay connected: every relative link in README.md
and docs/*.md leads to a file that exists, and to a heading of it when it names one
(GitHub's anchors), and every page of docs/ is in the README's index."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = (README, *sorted(DOCS.glob("*.md")))
README_LIMIT = 300
"""Lines: what it is, the demo, install, the three uses, and the index of docs/."""
INDEX_HEADING = "## Documentation"

FENCE = re.compile(r"^ {0,3}(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """The text outside fenced code blocks (their lines blanked, so line numbers hold)."""
    lines, fenced = [], None
    for line in text.splitlines():
        opening = FENCE.match(line)
        if fenced is None and opening:
            fenced = opening.group(1)
            lines.append("")
        elif fenced is not None:
            if line.strip().startswith(fenced):
                fenced = None
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text without markup, lowercased, punctuation
    dropped (letters, digits, `_` and `-` kept), each space a `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings; a repeated one gets -1, -2, ... as on
    GitHub."""
    seen: Counter[str] = Counter()
    found = set()
    for line in prose(path.read_text(encoding="utf-8")).splitlines():
        heading = HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(2))
        found.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return found


def links(path: Path) -> list[str]:
    """The targets of a markdown file's inline links and images, code left out."""
    text = INLINE_CODE.sub(lambda code: " " * len(code.group(0)), prose(path.read_text("utf-8")))
    return [match.group(1) for match in LINK.finditer(text)]


def relative_links() -> list[tuple[Path, str]]:
    return [
        (page, target)
        for page in PAGES
        for target in links(page)
        if target and not SCHEME.match(target) and not target.startswith("//")
    ]


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LIMIT, (
        f"README.md has {len(lines)} lines, at most {README_LIMIT}: move reference to docs/"
    )


@pytest.mark.parametrize(
    ("page", "target"),
    relative_links(),
    ids=lambda value: value.name if isinstance(value, Path) else value,
)
def test_each_relative_link_resolves(page: Path, target: str) -> None:
    address, _, anchor = target.partition("#")
    resolved = (page.parent / unquote(address)).resolve() if address else page
    assert resolved.exists(), f"{page.relative_to(ROOT)}: {target} leads nowhere"
    assert resolved.is_relative_to(ROOT), f"{page.relative_to(ROOT)}: {target} leaves the repo"
    if anchor:
        assert resolved.suffix == ".md", (
            f"{page.relative_to(ROOT)}: {target}: an anchor in a non-markdown file"
        )
        assert unquote(anchor) in anchors(resolved), (
            f"{page.relative_to(ROOT)}: {target}: no heading of "
            f"{resolved.relative_to(ROOT)} has the anchor #{anchor}"
        )


def test_there_are_links_to_check() -> None:
    """A broken extractor would pass every check above by finding nothing."""
    targets = {target for page, target in relative_links() if page == README}
    assert "docs/configuration.md" in targets
    assert any("#" in target for _, target in relative_links())


def test_every_page_of_docs_is_in_the_readmes_index() -> None:
    text = prose(README.read_text(encoding="utf-8"))
    assert INDEX_HEADING in text.splitlines(), f"README.md has no {INDEX_HEADING!r} section"
    index = text.split(f"\n{INDEX_HEADING}\n", 1)[1].split("\n## ", 1)[0]
    listed = {
        (README.parent / target.partition("#")[0]).resolve()
        for target in LINK.findall(index)
        if not SCHEME.match(target)
    }
    missing = [
        page.relative_to(ROOT).as_posix()
        for page in sorted(DOCS.glob("*.md"))
        if page.resolve() not in listed
    ]
    assert not missing, f"README.md's {INDEX_HEADING} does not list {missing}"


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("## The harness: `copilot-driver-harness`", "the-harness-copilot-driver-harness"),
        (
            "## Use it under GitHub Agentic Workflows (gh-aw)",
            "use-it-under-github-agentic-workflows-gh-aw",
        ),
        (
            "### Files changed by the editing tools (create, edit)",
            "files-changed-by-the-editing-tools-create-edit",
        ),
        (
            "## Measured (Copilot CLI 1.0.102, bubblewrap 0.8.0, Debian 12, 2 CPUs)",
            "measured-copilot-cli-10102-bubblewrap-080-debian-12-2-cpus",
        ),
        ("## `text` (the default): for a terminal", "text-the-default-for-a-terminal"),
        ("## A [linked](x.md) heading", "a-linked-heading"),
        ("### 1. Every request waits ~40 ms", "1-every-request-waits-40-ms"),
    ],
)
def test_anchors_follow_githubs_rules(heading: str, anchor: str) -> None:
    match = HEADING.match(heading)
    assert match is not None
    assert slug(match.group(2)) == anchor


def test_a_repeated_heading_gets_a_numbered_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Usage\n\n```\n# not a heading\n```\n\n## Usage\n\n## Usage\n")
    assert anchors(page) == {"usage", "usage-1", "usage-2"}
