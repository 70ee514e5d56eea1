"""What a reader sees of a markdown text, by a real CommonMark renderer (markdown-it-py,
with GitHub's tables): its text and each code span's content. Tests ask
these instead of searching the markdown source for the characters they expect."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

_RENDERER = MarkdownIt("commonmark").enable("table")


def code_spans(markdown: str) -> list[str]:
    """The content of every code span, in order, as rendered."""
    return [
        child.content
        for token in _RENDERER.parse(markdown)
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]


def rendered_text(markdown: str) -> str:
    """The text a reader sees: each block on its own line, table cells joined by ` | `,
    code spans as their content (no backticks), inline HTML tags dropped."""
    lines: list[str] = []
    row: list[str] | None = None
    for token in _RENDERER.parse(markdown):
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            lines.append(" | ".join(row))
            row = None
        elif token.type == "inline":
            text = _inline_text(token.children or [])
            if row is not None:
                row.append(text)
            else:
                lines.append(text)
        elif token.type in ("fence", "code_block"):
            lines.append(token.content.rstrip("\n"))
    return "\n".join(lines)


def _inline_text(children: list[Token]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak") or _line_break_tag(child):
            parts.append("\n")
    return "".join(parts)


def _line_break_tag(token: Token) -> bool:
    return token.type == "html_inline" and token.content.lower() in ("<br>", "<br/>")
