"""Inline Markdown as styled spans, and word-wrapping of spans.

markdown-it-py parses the inline syntax (emphasis, code spans, links, autolinks, escapes, entities);
`inline_spans` turns its token stream into `(text, style)` pairs. A link shows its text in the link
style followed by its address in brackets, unless the address is the text itself or a `#` anchor.
Text that markdown-it decoded (entities, escapes) and addresses are shown through `visible`, so a
`&#x202e;` cannot become a control character on the terminal.

Pure functions over `(text, style)` pairs; turning spans into terminal bytes is `Painter`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from rich.cells import cell_len
from rich.style import Style

from framework_core.ui.safe_text import visible

if TYPE_CHECKING:
    from markdown_it.token import Token

Span = tuple[str, Optional[Style]]


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


def inline_spans(tokens: list[Token], styles: InlineStyles, base: Style | None = None) -> list[Span]:
    """Spans for one inline token's children (addresses as written: see `TerminalMarkdown`)."""
    spans: list[Span] = []
    stack: list[Style | None] = [base]
    links: list[tuple[int, str | None]] = []  # where each open link's text starts, and its address to show
    nested = {"em_open": styles.em, "strong_open": styles.strong, "s_open": styles.strike}
    for tok in tokens:
        kind = tok.type
        if kind == "text" or kind == "html_inline":  # HTML is shown as the text it is
            spans.append((tok.content, stack[-1]))
        elif kind == "text_special":  # an escape or an entity
            spans.append((visible(tok.content), stack[-1]))
        elif kind == "softbreak":
            spans.append((" ", stack[-1]))
        elif kind == "hardbreak":
            spans.append(("\n", stack[-1]))
        elif kind == "code_inline":
            spans.append((tok.content, _join(stack[-1], styles.code)))
        elif kind in nested:
            stack.append(_join(stack[-1], nested[kind]))
        elif kind == "link_open":
            auto = tok.markup == "autolink"  # <https://…>: the address is the text
            stack.append(_join(stack[-1], styles.link_url if auto else styles.link))
            links.append((len(spans), None if auto else visible(str(tok.attrs.get("href", "")))))
        elif kind == "link_close" and links:
            stack.pop()
            start, url = links.pop()
            label = "".join(text for text, _ in spans[start:])
            if url and url != label and not url.startswith("#"):
                spans.append((f" ({url})", _join(stack[-1], styles.link_url)))
        elif kind == "image":
            alt = "".join(text for text, _ in inline_spans(tok.children or [], styles))
            url = visible(str(tok.attrs.get("src", "")))
            spans.append((alt or "image", _join(stack[-1], styles.link)))
            spans.append((f" ({url})", _join(stack[-1], styles.link_url)))
        elif kind.endswith("_close") and len(stack) > 1:
            stack.pop()
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
            # rich names a console's colour system as a plain str but takes it back as a Literal of the same names
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
