"""Inline Markdown (emphasis, code spans, links, escapes) as styled spans, and word-wrapping of spans.

Every span body has a length cap, so text full of unclosed markers costs time linear in its length
(an emphasis longer than the cap shows its markers instead, which no model reply needs).

Pure functions over `(text, style)` pairs; turning spans into terminal bytes is `Painter`'s job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from rich.cells import cell_len
from rich.style import Style

Span = tuple[str, Optional[Style]]

_INLINE = re.compile(r"""
    (?P<tick>`+)(?P<code>.{1,1000}?)(?P=tick)
  | \[(?P<ltext>[^\]\n]{1,300})\]\((?P<lurl>[^)\s(\[]{1,1000}+)(?:\s+"[^"]{0,300}")?\)
  | <(?P<auto>(?:https?|mailto|file):[^>\s]{1,2000})>
  | (?P<sd>\*\*)(?=\S)(?P<sbody>.{1,300}?)(?<=\S)\*\*
  | (?<![A-Za-z0-9_])(?P<su>__)(?=\S)(?P<subody>.{1,300}?)(?<=\S)__(?![A-Za-z0-9_])
  | ~~(?=\S)(?P<strike>.{1,300}?)(?<=\S)~~
  | (?<!\*)\*(?=[^\s*])(?P<em>.{1,300}?)(?<=[^\s*])\*(?!\*)
  | (?<![A-Za-z0-9_])_(?=[^\s_])(?P<emu>.{1,300}?)(?<=[^\s_])_(?![A-Za-z0-9_])
  | \\(?P<esc>[\\`*_{}\[\]()#+\-.!~|<>])
""", re.VERBOSE)


@dataclass(frozen=True)
class InlineStyles:
    code: Style
    strong: Style
    em: Style
    strike: Style
    link: Style
    link_url: Style


def _join(base: Style | None, extra: Style) -> Style:
    return extra if base is None else base + extra


def parse_inline(text: str, styles: InlineStyles, base: Style | None = None) -> list[Span]:
    """Split `text` into styled spans. Unclosed markers stay literal, as CommonMark leaves them."""
    if not any(c in text for c in "`*_[<~\\"):
        return [(text, base)]
    spans: list[Span] = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            spans.append((text[pos:m.start()], base))
        pos = m.end()
        kind = m.lastgroup
        if m.group("code") is not None:
            code = m.group("code")
            if len(code) > 1 and code.startswith(" ") and code.endswith(" "):
                code = code[1:-1]
            spans.append((code, _join(base, styles.code)))
        elif m.group("ltext") is not None:
            label, url = m.group("ltext"), m.group("lurl")
            spans.extend(parse_inline(label, styles, _join(base, styles.link)))
            if url != label and not url.startswith("#"):
                spans.append((f" ({url})", _join(base, styles.link_url)))
        elif m.group("auto") is not None:
            spans.append((m.group("auto"), _join(base, styles.link_url)))
        elif m.group("sbody") is not None or m.group("subody") is not None:
            spans.extend(parse_inline(m.group("sbody") or m.group("subody"), styles, _join(base, styles.strong)))
        elif m.group("strike") is not None:
            spans.extend(parse_inline(m.group("strike"), styles, _join(base, styles.strike)))
        elif m.group("em") is not None or m.group("emu") is not None:
            spans.extend(parse_inline(m.group("em") or m.group("emu"), styles, _join(base, styles.em)))
        else:
            assert kind == "esc"
            spans.append((m.group("esc"), base))
    if pos < len(text):
        spans.append((text[pos:], base))
    return spans


def width_of(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _split_long(word: str, style: Style | None, width: int) -> list[Span]:
    if word.isascii():
        return [(word[i:i + width], style) for i in range(0, len(word), width)]
    parts: list[Span] = []
    current = ""
    for ch in word:
        if cell_len(current + ch) > width:
            parts.append((current, style))
            current = ""
        current += ch
    if current:
        parts.append((current, style))
    return parts


def wrap_spans(spans: list[Span], width: int) -> list[list[Span]]:
    """Greedy word wrap to `width` cells. Runs of spaces collapse at line breaks; newlines force a break."""
    width = max(width, 1)
    lines: list[list[Span]] = [[]]
    used = 0
    pending_space: Span | None = None
    for text, style in spans:
        for n, piece in enumerate(text.split("\n")):
            if n:
                lines.append([])
                used, pending_space = 0, None
            for w, word in enumerate(piece.split(" ")):
                if w:
                    if used:
                        pending_space = (" ", style)
                if not word:
                    continue
                size = width_of(word)
                space = 1 if pending_space else 0
                if used and used + space + size > width:
                    lines.append([])
                    used, pending_space, space = 0, None, 0
                if pending_space:
                    lines[-1].append(pending_space)
                    pending_space = None
                if size > width:
                    chunks = _split_long(word, style, width)
                    for chunk in chunks[:-1]:
                        lines[-1].append(chunk)
                        lines.append([])
                    lines[-1].append(chunks[-1])
                    used = width_of(chunks[-1][0])
                    continue
                lines[-1].append((word, style))
                used += space + size
    return lines


class Painter:
    """Spans to terminal text for one console: its colour system, and NO_COLOR (which keeps bold and the like)."""

    def __init__(self, color_system: object | None, no_color: bool) -> None:
        self.color_system = color_system
        self.no_color = no_color
        self._cache: dict[Style, tuple[str, str]] = {}

    def _codes(self, style: Style) -> tuple[str, str]:
        cached = self._cache.get(style)
        if cached is None:
            use = style.without_color if self.no_color else style
            marked = use.render("\0", color_system=self.color_system)  # type: ignore[arg-type]
            before, _, after = marked.partition("\0")
            cached = self._cache[style] = (before, after)
        return cached

    def line(self, spans: list[Span]) -> str:
        if self.color_system is None:
            return "".join(text for text, _ in spans)
        out: list[str] = []
        for text, style in spans:
            if style is None or not text:
                out.append(text)
            else:
                before, after = self._codes(style)
                out.append(before + text + after)
        return "".join(out)
