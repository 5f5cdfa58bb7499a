"""Markdown to terminal lines, fast enough to keep up with a stream (`make bench` measures it;
benchmarks/RESULTS.md).

One parser for the whole reply: markdown-it-py with the CommonMark preset plus GFM tables and
strikethrough (linkify off). Its token stream is rendered here: paragraphs and headings wrapped by cell
width, bullet, numbered and task lists with nesting, block quotes, rules, fenced and indented code
(highlighted by Pygments, `markdown_code.py`), raw HTML shown as text. A table is laid out by rich from
the same tokens, its cells styled as our inline text, and comes back as lines. Output is a list of lines
already wrapped to the width, so a caller can count them.

Parsing is two steps so a stream can find block boundaries cheaply: `parse` builds the block structure
only, and each inline token's content is parsed when its block is rendered (`_spans`).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import COLOR_SYSTEMS, Console

from framework_core.ui.markdown_code import CodeRenderer
from framework_core.ui.markdown_inline import InlineStyles, Painter, Span, inline_spans, width_of, wrap_spans
from framework_core.ui.safe_text import visible_reply

if TYPE_CHECKING:
    from rich.console import JustifyMethod

DEFAULT_CODE_THEME = "monokai"  # the default of config.ui.code_theme too
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")
TASK = re.compile(r"\[(?P<mark>[ xX])\][ \t]+")
INLINE_MARK = re.compile(r"[\n`*_~\[<&\\]")  # a character some inline rule starts at; without one, text is text
_ALIGN: dict[str, JustifyMethod] = {"text-align:left": "left", "text-align:center": "center",
                                     "text-align:right": "right"}


class TerminalMarkdown(MarkdownIt):
    """markdown-it for a terminal: addresses are shown as written, never put in HTML or opened. (markdown-it
    percent-encodes them for HTML attributes and refuses `javascript:`, `file:` and most `data:` addresses,
    which protects a browser; here they are text, shown through `visible` like any other.)"""

    def normalizeLink(self, url: str) -> str:
        return url

    def normalizeLinkText(self, link: str) -> str:
        return link

    def validateLink(self, url: str) -> bool:
        return True


def make_parser() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough; bare URLs stay text (linkify off)."""
    return TerminalMarkdown("commonmark", {"linkify": False}).enable(["table", "strikethrough"])


def top_level_blocks(tokens: list[Token]) -> list[list[Token]]:
    """Split a block token stream into its top-level blocks (a list is one block, with all its items)."""
    blocks: list[list[Token]] = []
    depth = 0
    for tok in tokens:
        if depth == 0:
            blocks.append([])
        blocks[-1].append(tok)
        depth += tok.nesting
    return blocks


class ItemParts(NamedTuple):
    """One list item rendered: its label (painted), the label's width, and its blocks' lines. Tuples of strings
    only, which the garbage collector stops tracking: a stream keeps thousands of them for a long list."""

    head: str
    pad: int
    blocks: tuple[tuple[str, ...], ...]


def list_tightness(tokens: list[Token]) -> bool | None:
    """Whether the list opened by `tokens[0]` is tight, as markdown-it marks it on the paragraphs directly in its
    items (hidden when tight); None when it has none, so it does not show."""
    level = tokens[0].level + 2
    return next((t.hidden for t in tokens if t.type == "paragraph_open" and t.level == level), None)


@dataclass
class _Walk:
    """One block's tokens while it is rendered: the reference definitions, and where each opening token closes."""

    tokens: list[Token]
    env: dict[str, Any]
    close: list[int]


def _closes(tokens: list[Token]) -> list[int]:
    close = list(range(len(tokens)))
    stack: list[int] = []
    for k, tok in enumerate(tokens):
        if tok.nesting == 1:
            stack.append(k)
        elif tok.nesting == -1 and stack:
            close[stack.pop()] = k
    return close


class MarkdownRenderer:
    """Renders Markdown text to a list of terminal lines for one console (its colours and NO_COLOR)."""

    def __init__(self, console: Console, *, code_theme: str = DEFAULT_CODE_THEME) -> None:
        self.console = console
        self.code_theme = code_theme
        self.md = make_parser()
        system = COLOR_SYSTEMS.get(console.color_system) if console.color_system else None
        self.painter = Painter(system, console.no_color)
        self.plain = system is None
        self.code = CodeRenderer(self.painter, plain=self.plain, code_theme=code_theme)
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
        self.table_border = get("markdown.table.border", default="none")
        self.table_header = get("markdown.table.header", default="none")

    # -- entry ------------------------------------------------------------------------------------
    def render(self, text: str, width: int) -> list[str]:
        env: dict[str, Any] = {}
        return self.render_blocks(self.parse(visible_reply(text), env), env, width)

    def parse(self, text: str, env: dict[str, Any]) -> list[list[Token]]:
        """The top-level blocks of `text` (already made visible), block structure only. Reference
        definitions go to `env["references"]`, where the first definition of a label wins."""
        tokens: list[Token] = []
        self.md.block.parse(text, self.md, env, tokens)
        return top_level_blocks(tokens)

    def render_blocks(self, blocks: list[list[Token]], env: dict[str, Any], width: int) -> list[str]:
        """Top-level blocks with a blank line between them."""
        return self._join([self.render_block(block, env, width) for block in blocks], tight=False)

    def render_block(self, tokens: list[Token], env: dict[str, Any], width: int) -> list[str]:
        return self._block(_Walk(tokens, env, _closes(tokens)), 0, width)

    @staticmethod
    def _join(blocks: Sequence[Sequence[str]], *, tight: bool) -> list[str]:
        out: list[str] = []
        for block in blocks:
            if not block:
                continue
            if out and not tight:
                out.append("")
            out.extend(block)
        return out

    # -- blocks -----------------------------------------------------------------------------------
    def _children(self, walk: _Walk, i: int, end: int, width: int) -> list[list[str]]:
        """The blocks between tokens `i` and `end`, each rendered."""
        out: list[list[str]] = []
        while i < end:
            out.append(self._block(walk, i, width))
            i = walk.close[i] + 1
        return out

    def _block(self, walk: _Walk, i: int, width: int) -> list[str]:
        tok = walk.tokens[i]
        kind = tok.type
        if kind == "paragraph_open":
            return self._wrap(self._spans(walk, i + 1), width)
        if kind == "heading_open":
            return self._wrap(self._spans(walk, i + 1, self.heading[int(tok.tag[1:]) - 1]), width)
        if kind == "fence" or kind == "code_block":
            language = tok.info.split(maxsplit=1)[0] if kind == "fence" and tok.info.strip() else ""
            return self.code.render(tok.content.split("\n"), language, width)
        if kind == "hr":
            return [self.painter.line([("─" * width, self.rule)])]
        if kind == "html_block":  # shown as the text it is
            return self._wrap([(tok.content.rstrip("\n"), None)], width)
        if kind == "blockquote_open":
            return self._quote(walk, i, width)
        if kind == "bullet_list_open" or kind == "ordered_list_open":
            return self._list(walk, i, width)
        if kind == "table_open":
            return self._table(walk, i, width)
        return []

    def _spans(self, walk: _Walk, i: int, base: Any = None) -> list[Span]:
        """The spans of inline token `i`, its content parsed now (with the references known by now)."""
        tok = walk.tokens[i]
        if not tok.children and not INLINE_MARK.search(tok.content):
            return [(tok.content, base)] if tok.content else []
        if tok.children:
            return inline_spans(tok.children, self.inline, base)
        # parsed into a list of our own, not kept on the token: a long block's inline tokens then do not all stay
        # alive until the block is done (the garbage collector's full passes grow with what is alive)
        children: list[Token] = []
        self.md.inline.parse(tok.content, self.md, walk.env, children)
        return inline_spans(children, self.inline, base)

    def _wrap(self, spans: list[Span], width: int) -> list[str]:
        return [self.painter.line(row) for row in wrap_spans(spans, width)]

    def _quote(self, walk: _Walk, i: int, width: int) -> list[str]:
        bar = self.painter.line([("▌ ", self.quote)])
        body = self._join(self._children(walk, i + 1, walk.close[i], max(width - 2, 10)), tight=False)
        return [bar + self._restyle(line) for line in body]

    def _restyle(self, line: str) -> str:
        """Quoted text takes the quote's colour unless it already has styling of its own."""
        if self.plain or "\x1b" in line or not line:
            return line
        return self.painter.line([(line, self.quote)])

    # -- lists ----------------------------------------------------------------------------------------
    def _list(self, walk: _Walk, i: int, width: int) -> list[str]:
        tok, end = walk.tokens[i], walk.close[i]
        number = int(tok.attrs.get("start", 1)) if tok.type == "ordered_list_open" else 0
        tight = list_tightness(walk.tokens[i:end])
        return self.join_items(self._items(walk, i, width, number, end), True if tight is None else tight)

    def list_items(self, tokens: list[Token], env: dict[str, Any], width: int, count: int,
                   number: int) -> list[ItemParts]:
        """The first `count` items of the list block `tokens`, rendered apart and numbered from `number`, for
        `join_items` (a stream renders a long list's items as they end; `_list` renders a list the same way)."""
        walk = _Walk(tokens, env, _closes(tokens))
        return self._items(walk, 0, width, number, walk.close[0], count)

    def _items(self, walk: _Walk, i: int, width: int, number: int, end: int, count: int = -1) -> list[ItemParts]:
        ordered = walk.tokens[i].type == "ordered_list_open"
        out: list[ItemParts] = []
        j = i + 1
        while j < end and len(out) != count:
            label, style = (f" {number}. ", self.number) if ordered else (" • ", self.bullet)
            label += self._task_box(walk, j)
            pad = width_of(label)
            blocks = self._children(walk, j + 1, walk.close[j], max(width - pad, 10))
            out.append(ItemParts(self.painter.line([(label, style)]), pad, tuple(tuple(b) for b in blocks)))
            number += 1
            j = walk.close[j] + 1
        return out

    def join_items(self, items: list[ItemParts], tight: bool) -> list[str]:
        """A list's lines from its items: a loose list has a blank line between items and between the blocks
        of an item."""
        out: list[str] = []
        for item in items:
            if out and not tight:
                out.append("")
            inner = self._join(item.blocks, tight=tight) or [""]
            out.append(item.head + inner[0])
            out.extend((" " * item.pad + line) if line else "" for line in inner[1:])
        return out

    @staticmethod
    def _task_box(walk: _Walk, i: int) -> str:
        """A GFM task item (`- [ ] text`): its box, with the `[ ]` taken off the item's first paragraph."""
        tokens = walk.tokens
        if i + 2 >= len(tokens) or tokens[i + 1].type != "paragraph_open" or tokens[i + 2].children:
            return ""
        task = TASK.match(tokens[i + 2].content)
        if task is None:
            return ""
        tokens[i + 2] = tokens[i + 2].copy(content=tokens[i + 2].content[task.end():], children=[])
        return "☑ " if task.group("mark") in "xX" else "☐ "

    # -- tables -----------------------------------------------------------------------------------
    def _table(self, walk: _Walk, i: int, width: int) -> list[str]:
        """Laid out by rich, as `rich.markdown` lays out tables, with cells styled by our inline spans."""
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(box=box.SIMPLE, pad_edge=False, style=self.table_border, show_edge=True, collapse_padding=True)
        row: list[Text] = []
        head = True
        justify: JustifyMethod = "default"
        for j in range(i, walk.close[i]):
            tok = walk.tokens[j]
            if tok.type == "tbody_open":
                head = False
            elif tok.type == "tr_open":
                row = []
            elif tok.type == "th_open" or tok.type == "td_open":
                justify = _ALIGN.get(str(tok.attrs.get("style", "")), "default")
            elif tok.type == "inline":
                cell = Text(justify=justify)
                for text, style in self._spans(walk, j):
                    cell.append(text, style)
                if head:
                    cell.stylize(self.table_header)
                row.append(cell)
            elif tok.type == "tr_close" and head:
                for cell in row:
                    table.add_column(cell)
            elif tok.type == "tr_close":
                table.add_row(*row)
        return self._capture(table, width)

    def _capture(self, renderable: Any, width: int) -> list[str]:
        buf = io.StringIO()
        capture = Console(file=buf, width=width, force_terminal=not self.plain, no_color=self.console.no_color,
                          # rich returns the system as a str and takes it as a Literal of the same names
                          color_system=self.console.color_system,  # type: ignore[arg-type]
                          highlight=False, emoji=False)
        capture.print(renderable)
        lines = buf.getvalue().split("\n")
        while lines and not _visible(lines[-1]).strip():
            lines.pop()
        while lines and not _visible(lines[0]).strip():
            lines.pop(0)
        return lines


def _visible(line: str) -> str:
    return ANSI_CODE.sub("", line)
