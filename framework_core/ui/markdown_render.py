"""Markdown to terminal lines, fast enough to keep up with a stream: linear in the reply's length and close to
printing the raw text (`make bench` measures both; benchmarks/RESULTS.md).

Covers what models write: paragraphs, headings (ATX and setext), bullet, numbered and task lists with
nesting, block quotes, rules, fenced and indented code (highlighted by Pygments with the console's
`code_theme`). A chunk holding a table goes to `rich.markdown`, which lays tables out well, then comes
back as lines. Output is a list of lines already wrapped to the width, so a caller can count them.
"""

from __future__ import annotations

import io
import re
from typing import Any

from rich.console import COLOR_SYSTEMS, Console
from rich.style import Style

from framework_core.ui.markdown_inline import InlineStyles, Painter, Span, parse_inline, width_of, wrap_spans
from framework_core.ui.safe_text import visible_reply

FENCE = re.compile(r"^(?P<ind> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(?P<bar>=+|-+)[ \t]*$")
RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
QUOTE = re.compile(r"^ {0,3}> ?(?P<rest>.*)$")
ITEM = re.compile(r"^(?P<ind> *)(?P<marker>[-*+]|\d{1,9}[.)])(?P<gap>[ \t]+|$)(?P<rest>.*)$")
TASK = re.compile(r"^\[(?P<mark>[ xX])\][ \t]+")
DEFAULT_CODE_THEME = "monokai"  # the default of config.ui.code_theme too
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")


def closes_fence(line: str, fence: str) -> bool:
    """A closing fence: only the opening fence's character, at least as many of them (CommonMark)."""
    stripped = line.strip()
    return bool(stripped) and stripped == fence[0] * len(stripped) and len(stripped) >= len(fence)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class MarkdownRenderer:
    """Renders Markdown text to a list of terminal lines for one console (its colours and NO_COLOR)."""

    def __init__(self, console: Console, *, code_theme: str = DEFAULT_CODE_THEME) -> None:
        self.console = console
        self.code_theme = code_theme
        system = COLOR_SYSTEMS.get(console.color_system) if console.color_system else None
        self.painter = Painter(system, console.no_color)
        self.plain = system is None
        get = console.get_style
        self.inline = InlineStyles(code=get("markdown.code"), strong=get("markdown.strong"), em=get("markdown.em"),
                                   strike=get("markdown.s"), link=get("markdown.link"),
                                   link_url=get("markdown.link_url"))
        self.heading = [get("markdown.h1"), get("markdown.h2"), get("markdown.h3"), get("markdown.h4"),
                        get("markdown.h5"), get("markdown.h6")]
        self.bullet = get("markdown.item.bullet")
        self.number = get("markdown.item.number")
        self.quote = get("markdown.block_quote")
        self.rule = get("markdown.hr")
        self._theme: Any = None
        self._token_styles: dict[Any, Style] = {}
        self._lexers: dict[str, Any] = {}

    # -- entry ------------------------------------------------------------------------------------
    def render(self, text: str, width: int) -> list[str]:
        text = visible_reply(text)  # before anything else: the rich path for tables must get safe text too
        lines = text.split("\n")
        if any(TABLE_RULE.match(line) and "|" in prev for prev, line in zip(lines, lines[1:])):
            return self._rich(text, width)
        return self._join(self._blocks(lines, width), tight=False)

    @staticmethod
    def _join(blocks: list[list[str]], *, tight: bool) -> list[str]:
        out: list[str] = []
        for block in blocks:
            if out and not tight:
                out.append("")
            out.extend(block)
        return out

    def _rich(self, text: str, width: int) -> list[str]:
        from rich.markdown import Markdown

        buf = io.StringIO()
        capture = Console(file=buf, width=width, force_terminal=not self.plain, no_color=self.console.no_color,
                          color_system=self.console.color_system,  # type: ignore[arg-type]
                          highlight=False, emoji=False)
        capture.print(Markdown(text, code_theme=self.code_theme, hyperlinks=False))  # links as "text (url)", as ours
        lines = buf.getvalue().split("\n")
        while lines and not _visible(lines[-1]).strip():
            lines.pop()
        while lines and not _visible(lines[0]).strip():
            lines.pop(0)
        return lines

    # -- blocks -----------------------------------------------------------------------------------
    def _blocks(self, lines: list[str], width: int) -> list[list[str]]:
        """Split into blocks: paragraph lines gather until a blank line or another block starts."""
        blocks: list[list[str]] = []
        para: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            setext = SETEXT.match(line) if para else None
            if setext:  # the paragraph so far was a heading
                level = 1 if setext.group("bar")[0] == "=" else 2
                blocks.append(self._heading(" ".join(p.strip() for p in para), level, width))
                para.clear()
                i += 1
                continue
            found = None if not line.strip() else self._block_at(lines, i, width, in_paragraph=bool(para))
            if found is None and line.strip():
                para.append(line)
                i += 1
                continue
            if para:
                blocks.append(self._paragraph(para, width))
                para.clear()
            if found is None:  # a blank line
                i += 1
            else:
                block, i = found
                blocks.append(block)
        if para:
            blocks.append(self._paragraph(para, width))
        return blocks

    def _block_at(self, lines: list[str], i: int, width: int, *,
                  in_paragraph: bool) -> tuple[list[str], int] | None:
        """The block that starts at line `i`, rendered, and the line after it; None for paragraph text."""
        line = lines[i]
        if fence := FENCE.match(line):
            return self._fenced(lines, i, fence, width)
        if heading := HEADING.match(line):
            return self._heading(heading.group("text") or "", len(heading.group("hashes")), width), i + 1
        if RULE.match(line):
            return [self.painter.line([("─" * width, self.rule)])], i + 1
        if QUOTE.match(line):
            return self._quote(lines, i, width)
        item = ITEM.match(line)
        if item and (not in_paragraph or item.group("rest").strip()):  # an empty item cannot interrupt a paragraph
            return self._list(lines, i, width)
        if not in_paragraph and line.startswith("    "):
            return self._indented_code(lines, i, width)
        return None

    def _indented_code(self, lines: list[str], i: int, width: int) -> tuple[list[str], int]:
        j = i
        while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
            j += 1
        while j > i and not lines[j - 1].strip():
            j -= 1
        return self._code([ln[4:] for ln in lines[i:j]], "", width), j

    def _paragraph(self, lines: list[str], width: int) -> list[str]:
        parts: list[str] = []
        for k, line in enumerate(lines):
            last = k == len(lines) - 1
            hard = not last and (line.endswith("  ") or line.endswith("\\"))
            text = line.strip()
            if hard and text.endswith("\\"):
                text = text[:-1]
            parts.append(text + ("\n" if hard else ("" if last else " ")))
        spans = parse_inline("".join(parts), self.inline)
        return [self.painter.line(row) for row in wrap_spans(spans, width)]

    def _heading(self, text: str, level: int, width: int) -> list[str]:
        style = self.heading[level - 1]
        spans = parse_inline(text.strip(), self.inline, style)
        return [self.painter.line(row) for row in wrap_spans(spans, width)]

    def _quote(self, lines: list[str], i: int, width: int) -> tuple[list[str], int]:
        inner: list[str] = []
        while i < len(lines):
            m = QUOTE.match(lines[i])
            if m:
                inner.append(m.group("rest"))
            elif inner and inner[-1].strip() and lines[i].strip() and not self._starts_block(lines[i]):
                inner.append(lines[i])  # lazy continuation of the quoted paragraph
            else:
                break
            i += 1
        bar = self.painter.line([("▌ ", self.quote)])
        body = self._join(self._blocks(inner, max(width - 2, 10)), tight=False)
        return [bar + self._restyle(line, self.quote) for line in body], i

    def _restyle(self, line: str, style: Style) -> str:
        """Quoted text takes the quote's colour unless it already has styling of its own."""
        if self.plain or "\x1b" in line or not line:
            return line
        return self.painter.line([(line, style)])

    @staticmethod
    def _starts_block(line: str) -> bool:
        return bool(FENCE.match(line) or HEADING.match(line) or RULE.match(line) or ITEM.match(line))

    # -- lists ------------------------------------------------------------------------------------
    def _list(self, lines: list[str], i: int, width: int) -> tuple[list[str], int]:
        first = ITEM.match(lines[i])
        assert first is not None
        base = len(first.group("ind"))
        items: list[tuple[str, list[str]]] = []
        content_at = 0
        n = len(lines)
        while i < n:
            line = lines[i]
            m = ITEM.match(line)
            if m and len(m.group("ind")) <= base + 1 and not RULE.match(line):
                gap = len(m.group("gap").expandtabs(4))
                gap = 1 if gap == 0 or gap > 4 else gap
                content_at = len(m.group("ind")) + len(m.group("marker")) + gap
                items.append((m.group("marker"), [m.group("rest")]))
            elif not line.strip():
                j = i + 1
                while j < n and not lines[j].strip():
                    j += 1
                if j >= n or _indent(lines[j]) < min(content_at, base + 2) and not ITEM.match(lines[j]):
                    break
                if ITEM.match(lines[j]) and _indent(lines[j]) <= base + 1:
                    i = j
                    continue
                items[-1][1].append("")
            elif _indent(line) > base:
                items[-1][1].append(line[min(_indent(line), content_at):])
            elif items[-1][1][-1].strip() and not self._starts_block(line) and not QUOTE.match(line):
                items[-1][1].append(line.strip())  # lazy continuation line
            else:
                break
            i += 1
        rendered: list[str] = []
        for marker, body in items:
            rendered.extend(self._item(marker, body, width))
        return rendered, i

    def _item(self, marker: str, body: list[str], width: int) -> list[str]:
        if marker in "-*+":
            label, style = " • ", self.bullet
        else:
            label, style = f" {marker[:-1]}. ", self.number
        task = TASK.match(body[0]) if body else None
        if task:
            label += "☑ " if task.group("mark") in "xX" else "☐ "
            body = [body[0][task.end():]] + body[1:]
        pad = width_of(label)
        inner = self._join(self._blocks(body, max(width - pad, 10)), tight=True) or [""]
        head = self.painter.line([(label, style)])
        return [head + inner[0]] + [(" " * pad + line) if line else "" for line in inner[1:]]

    # -- code -------------------------------------------------------------------------------------
    def _fenced(self, lines: list[str], i: int, fence: re.Match[str], width: int) -> tuple[list[str], int]:
        mark = fence.group("fence")
        strip = len(fence.group("ind"))
        body: list[str] = []
        i += 1
        while i < len(lines):
            line = lines[i]
            if closes_fence(line, mark):
                i += 1
                break
            body.append(line[min(_indent(line), strip):])
            i += 1
        return self._code(body, fence.group("info"), width), i

    def _lexer(self, language: str) -> Any:
        key = language.lower()
        if key not in self._lexers:
            from pygments.lexers import get_lexer_by_name
            from pygments.util import ClassNotFound

            try:
                self._lexers[key] = get_lexer_by_name(key, stripnl=False, ensurenl=False) if key else None
            except ClassNotFound:
                self._lexers[key] = None
        return self._lexers[key]

    def _token_style(self, token: Any) -> Style:
        style = self._token_styles.get(token)
        if style is None:
            style = self._token_styles[token] = self._theme.get_style_for_token(token)
        return style

    def _code(self, body: list[str], language: str, width: int) -> list[str]:
        while body and not body[-1].strip():
            body.pop()
        if self.plain:
            return ["    " + line if line else "" for line in body] or [""]
        if self._theme is None:
            from rich.syntax import Syntax

            self._theme = Syntax.get_theme(self.code_theme)
            self._background = self._theme.get_background_style()
        rows = self._highlight(body, self._lexer(language))
        inner = max(width - 2, 1)
        pad_style = self._background
        out = [self.painter.line([(" " * width, pad_style)])]
        for row in rows:
            for piece in self._cut(row, inner):
                used = sum(width_of(text) for text, _ in piece)
                out.append(self.painter.line([(" ", pad_style)] + piece + [(" " * (width - 1 - used), pad_style)]))
        out.append(out[0])
        return out

    def _highlight(self, body: list[str], lexer: Any) -> list[list[Span]]:
        background = self._background
        if lexer is None:
            style = background + self._token_style(_text_token())
            return [[(line, style)] for line in body]
        rows: list[list[Span]] = [[]]
        for token, value in lexer.get_tokens("\n".join(body)):
            style = background + self._token_style(token)
            for k, part in enumerate(value.split("\n")):
                if k:
                    rows.append([])
                if part:
                    rows[-1].append((part, style))
        return rows[:len(body)] if body else []

    @staticmethod
    def _cut(row: list[Span], width: int) -> list[list[Span]]:
        """Hard-wrap one code line at `width` cells, keeping each piece's style (code is not reflowed)."""
        if sum(width_of(text) for text, _ in row) <= width:
            return [row]
        pieces: list[list[Span]] = [[]]
        used = 0
        for text, style in row:
            for ch in text:
                size = width_of(ch)
                if used + size > width:
                    pieces.append([])
                    used = 0
                if pieces[-1] and pieces[-1][-1][1] is style:
                    pieces[-1][-1] = (pieces[-1][-1][0] + ch, style)
                else:
                    pieces[-1].append((ch, style))
                used += size
        return pieces


def _visible(line: str) -> str:
    return ANSI_CODE.sub("", line)


def _text_token() -> Any:
    from pygments.token import Token

    return Token.Text
