"""Streamed Markdown in time linear in the reply's length, with repaints throttled.

The reply is parsed by markdown-it (`markdown_render.py`) one open tail at a time. A top-level block is
finished once a later top-level block has started on a complete line: CommonMark builds blocks line by
line, so nothing after that line can change the block any more. Finished blocks are rendered once and
written to the scrollback, and their lines leave the tail, which restarts at the open block. Only the
open block is re-rendered, in a small live region at the bottom that is erased and redrawn at most
`refresh_per_second` times. Writes are batched per repaint, so a fast stream costs one terminal write per
tick whatever the chunk size, and a slow terminal never holds the stream back for more than that write.
An open list is the exception to "only the open block": its finished items leave the tail and are rendered
as each ends (`markdown_held.py`), so a long list costs the same per character as a short one.

Reference definitions (`[1]: https://…`) bind forwards: a block is rendered with the definitions that
came before it or with it, and the open block with those after it too. A block already in the
scrollback is not rewritten when a definition for one of its links arrives later (models put them at
the end of a reply); the link stays as its bracketed text, and at the end of the reply every such late
definition is listed, so no address is lost.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from markdown_it.token import Token
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from framework_core.ui.markdown_held import HeldList, unresolved_labels
from framework_core.ui.markdown_render import DEFAULT_CODE_THEME, MarkdownRenderer, list_tightness
from framework_core.ui.safe_text import visible, visible_reply

HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ITEM = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")  # a list item's marker
LISTS = ("bullet_list_open", "ordered_list_open")
EAGER_LINES = 256  # a tail this long is split at the next block boundary, not at the next repaint


def rows_after_resize(cells: list[int], width: int) -> int:
    """Rows that lines of these widths take once the terminal re-wrapped them at `width`."""
    return sum(max(1, -(-cells_wide // max(width, 1))) for cells_wide in cells)


def closes_fence(line: str, fence: str) -> bool:
    """A closing fence: only the opening fence's character, at least as many of them (CommonMark)."""
    stripped = line.strip()
    return bool(stripped) and stripped == fence[0] * len(stripped) and len(stripped) >= len(fence)


@dataclass
class Rendered:
    """A finished block already rendered (a long list, from its items), and the labels it left unresolved."""

    lines: list[str]
    unresolved: list[tuple[str, str]]


class MarkdownStream:
    def __init__(self, console: Console, *, live: bool = True, refresh_per_second: float = 8,
                 code_theme: str = DEFAULT_CODE_THEME) -> None:
        self.console = console
        self.renderer = MarkdownRenderer(console, code_theme=code_theme)
        self.use_live = live and console.is_terminal and not console.is_dumb_terminal
        self.min_interval = 1.0 / refresh_per_second
        self._pending: list[str] = []  # pieces of the line still open (joined only when needed)
        self._lines: list[str] = []  # complete lines of the open tail: the open block, and lines not yet parsed
        self._parsed = 0  # how many of them the last parse saw
        self._list: HeldList | None = None  # the open list's finished items, moved out of the tail (`_hold`)
        self._ready: list[str] = []  # finished blocks rendered since the last repaint, for the scrollback
        self._fence: str | None = None  # the open block is this code fence, not closed yet
        self._hint = False  # a line since the last parse looks like the start of a new block
        self._blank = True  # the last complete line was blank
        self._refs: dict[str, Any] = {}  # reference definitions in the lines that left the tail
        self._done: list[tuple[list[Token], dict[str, Any]] | Rendered] = []  # finished blocks not yet written
        self._unresolved: dict[str, str] = {}  # labels in written blocks that had no definition then
        self._printed = 0  # blocks written to the scrollback
        self._region = 0  # lines currently drawn in the live region
        self._region_width = 0  # the terminal width they were drawn at
        self._region_cells: list[int] = []  # and how wide each of them is
        self._last_paint = 0.0
        self._lock = threading.Lock()  # a deferred repaint runs on a timer thread
        self._timer: threading.Timer | None = None
        self._closed = False

    # -- input ------------------------------------------------------------------------------------
    def feed(self, text: str) -> None:
        if not text:
            return
        text = visible_reply(text)
        with self._lock:
            if "\n" in text:  # only the new piece is searched: a long line costs linear time, not quadratic
                lines = ("".join(self._pending) + text).split("\n")
                last = lines.pop()
                self._pending = [last] if last else []
                self._add_lines(lines)
                if self._hint and len(self._lines) >= EAGER_LINES and self._split(final=False, eager=True):
                    # a long tail and a block ended: render it now, so a fast stream's tokens do not pile up
                    # until the next repaint (memory, and time, would grow with what one tick brings)
                    self._ready.append(self._take_done())
            else:
                self._pending.append(text)
            wait = self.min_interval - (time.monotonic() - self._last_paint)
            if wait <= 0:
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                self._paint()
            elif self._timer is None:  # text that arrives just before a pause still shows within one tick
                self._timer = threading.Timer(wait, self._deferred_paint)
                self._timer.daemon = True
                self._timer.start()

    def _deferred_paint(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._paint()

    def _add_lines(self, lines: list[str]) -> None:
        """Take complete lines, and notice one that probably starts a new top-level block: a heading or a
        fence at the margin, a closing fence, or text at the margin after a blank line (which ends a
        paragraph, a list or a quote, unless it is another item or quoted line). Only a hint to parse now."""
        for line in lines:
            if self._fence is not None:
                if closes_fence(line, self._fence):
                    self._fence = None
                    self._hint = True
            elif line and not line[0].isspace() and (
                    line.startswith(("#", "```", "~~~"))
                    or (self._blank and line[0] != ">" and not ITEM.match(line))):
                self._hint = True
            self._blank = not line.strip()
        self._lines.extend(lines)

    def _split(self, *, final: bool, eager: bool = False) -> dict[str, Any] | None:
        """Parse the open tail and move its finished blocks to `_done`.

        The tail is parsed again once a line hints at a new block, or else once it has grown by half since
        the last parse, so a block that stays open for a long time costs linear time overall, not a parse per
        repaint; an open code fence at the margin is not parsed again until its closing line. A hint parses at
        once (`eager`, from `feed`) when the tail has grown by half: a repaint parses the rest. The finished
        items of an open list leave the tail (`_hold`), so a long list is parsed from its last item only, and
        whole once, when it ends.
        """
        fresh = len(self._lines) - self._parsed
        if not final:
            if fresh <= 0 or (self._fence is not None and not self._hint):
                return None
            if fresh < self._parsed // 2 and (eager or not self._hint):
                return None
        self._hint = False
        width = self.console.width
        if self._list is not None:
            held = self._list
            env: dict[str, Any] = {"references": {**held.refs, **self._refs}}
            blocks = self.renderer.parse("\n".join(self._lines), env)
            if blocks and held.continued_by(blocks[0]):
                if not final and len(blocks) == 1:
                    self._hold(blocks[0], env, 0)
                    return env
                lines = held.finish(self.renderer, blocks[0], env, width)
                if lines is not None:
                    self._list = None
                    self._done.append(Rendered(lines, held.unresolved))
                    return self._settle(blocks[1:], env, final=final)
            self._lines[:0] = held.lines  # the list ended (or the reply did): parsed whole below, once
            self._list = None
        env = {"references": dict(self._refs)}
        return self._settle(self.renderer.parse("\n".join(self._lines), env), env, final=final)

    def _settle(self, blocks: list[list[Token]], env: dict[str, Any], *, final: bool) -> dict[str, Any]:
        """The tail's blocks, parsed: all but the open one (the last) are finished; the tail restarts at it."""
        finished = blocks if final else blocks[:-1]
        self._done.extend((block, env) for block in finished)
        if final or not blocks:
            self._parsed = len(self._lines)
            return env
        opening = blocks[-1][0]
        start, end = opening.map or (0, len(self._lines))
        for label, ref in env["references"].items():  # definitions before the open block are settled
            if ref["map"][0] < start:
                self._refs.setdefault(label, ref)
        fence = opening.markup if opening.type == "fence" else None
        if fence and end - 1 > start and closes_fence(self._lines[end - 1], fence):
            fence = None
        self._fence = fence
        del self._lines[:start]
        self._parsed = len(self._lines)
        if opening.type in LISTS:
            self._hold(blocks[-1], env, start)
        return env

    def _hold(self, block: list[Token], env: dict[str, Any], first: int) -> None:
        """Move the lines of the open list's finished items (all but its last: an item ends where the next one
        starts) out of the tail, rendered (`markdown_held.py`); `first` is the parsed text's line where the tail
        now starts."""
        level = block[0].level + 1
        items = [tok.map[0] - first for tok in block if tok.type == "list_item_open" and tok.level == level and tok.map]
        if len(items) < 2 or items[-1] <= 0:
            self._parsed = len(self._lines)
            return
        cut = items[-1]
        width = self.console.width
        held = self._list = self._list or HeldList.opened(block, env, width)
        for label, ref in env["references"].items():
            if label not in self._refs and first <= ref["map"][0] < first + cut:
                held.refs.setdefault(label, ref)
        held.take(self.renderer, block, env, len(items) - 1, width)
        held.lines.extend(self._lines[:cut])
        del self._lines[:cut]
        self._parsed = len(self._lines)

    # -- output -----------------------------------------------------------------------------------
    def _take_done(self) -> str:
        """Render the finished blocks once, as text ready for the scrollback."""
        if not self._done:
            return ""
        width = self.console.width
        parts: list[str] = []
        for entry in self._done:
            if isinstance(entry, Rendered):
                lines = entry.lines
                for label, text in entry.unresolved:
                    self._unresolved.setdefault(label, text)
            else:
                lines = self.renderer.render_block(entry[0], entry[1], width)
                for label, text in unresolved_labels(*entry):
                    self._unresolved.setdefault(label, text)
            if not lines:
                continue
            if self._printed:
                parts.append("\n")
            parts.append("\n".join(lines) + "\n")
            self._printed += 1
        self._done = []
        return "".join(parts)

    def _take_ready(self) -> str:
        """What is ready for the scrollback: blocks rendered as they ended, then those finished since."""
        self._ready.append(self._take_done())
        out, self._ready = "".join(self._ready), []
        return out

    def _late_definitions(self, env: dict[str, Any]) -> str:
        """Definitions that arrived after a block that needed them was written: listed, so no address is lost."""
        refs = env.get("references", {})
        late = [(text, refs[label]) for label, text in self._unresolved.items() if label in refs]
        if not late:
            return ""
        style = self.renderer.inline.link_url
        lines = [self.renderer.painter.line([(f"[{text}]: ", None),
                                             (visible(ref["href"]), style)])
                 for text, ref in late]
        return ("\n" if self._printed else "") + "\n".join(lines) + "\n"

    def _open_lines(self, width: int, height: int) -> list[str]:
        if len(self._pending) > 1:
            self._pending = ["".join(self._pending)]
        held = self._list
        if not self._lines and not self._pending and held is None:
            return []
        lines = self._list_bottom(held, width, height) if held is not None else None
        if lines is None:
            lines = self._bottom(held.lines if held is not None else [], width, height)
        if self._printed and lines:
            lines = [""] + lines
        return lines[-max(height - 1, 1):]

    def _bottom(self, held: list[str], width: int, height: int) -> list[str]:
        """Only the bottom of a long open block is visible, so only its bottom is rendered: a repaint costs
        the same however long the block grows (the whole block is rendered once, when it is finished)."""
        keep = height
        body = self._lines[-keep:]
        if len(body) < keep and held:  # the bottom of a long list: its last finished items too
            body = held[-(keep - len(body)):] + body
        body += self._pending
        head = self._lines[:1] if self._fence is not None and len(self._lines) > keep else []
        text = "\n".join(body)
        if len(text) > 4 * width * height:
            text = text[-4 * width * height:]
        env: dict[str, Any] = {"references": {**(self._list.refs if self._list else {}), **self._refs}}
        renderer = self.renderer
        return renderer.render_blocks(renderer.parse("\n".join(head + [text]), env), env, width)

    def _list_bottom(self, held: HeldList, width: int, height: int) -> list[str] | None:
        """The bottom of an open list from its items rendered as they ended, and the tail (its last item, and
        what follows) rendered now; None when those renderings cannot serve (`HeldList.exact`)."""
        text = "\n".join(self._lines + self._pending)
        if not held.exact or not held.items or width != held.width or len(text) > 4 * width * height:
            return None
        env: dict[str, Any] = {"references": {**held.refs, **self._refs}}
        renderer = self.renderer
        blocks = renderer.parse(text, env)
        if not blocks or not held.continued_by(blocks[0]):
            return None
        tight = not held.loose and list_tightness(blocks[0]) is not False
        items = held.items[-height:] + renderer.list_items(blocks[0], env, width, -1, held.number)
        rest = renderer.render_blocks(blocks[1:], env, width)
        return renderer.join_items(items, tight) + ([""] + rest if rest else [])

    def _clear_region(self) -> str:
        if not self._region:
            return ""
        drawn, self._region = self._region, 0
        width = self.console.width
        if width != self._region_width:
            # Resized: terminals re-wrap what is drawn (tmux, VTE, iTerm2, kitty, Konsole, Windows Terminal do),
            # so each drawn line now takes as many rows as its width needs at the new width. Erasing exactly
            # those rows leaves no copy of the draft behind.
            drawn = rows_after_resize(self._region_cells, width)
        up = f"\x1b[{drawn - 1}A" if drawn > 1 else ""
        return "\r" + up + "\x1b[J"

    def _paint(self) -> None:
        self._split(final=False)
        width, height = self.console.width, self.console.height
        out = self._clear_region() + self._take_ready()
        lines = self._open_lines(width, height) if self.use_live else []
        if lines:
            out += HIDE_CURSOR + "\n".join(lines)
            self._region, self._region_width = len(lines), width
            self._region_cells = [cell_len(ANSI.sub("", line)) for line in lines]
        self._write(out)
        self._last_paint = time.monotonic()

    def _write(self, text: str) -> None:
        if text:
            self.console.file.write(text)
            self.console.file.flush()

    # -- ending ---------------------------------------------------------------------------------------
    def finish(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._finish()

    def _finish(self) -> None:
        if self._pending:
            self._add_lines(["".join(self._pending)])
            self._pending = []
        env = self._split(final=True) or {}
        out = self._clear_region() + self._take_ready() + self._late_definitions(env)
        if self.use_live:
            out += SHOW_CURSOR
        self._write(out)

    def abort(self, note: str | None = None) -> None:
        self.finish()
        if note:
            self.console.print(Text(note, style="dim"))
