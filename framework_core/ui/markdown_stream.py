"""Streamed Markdown in time linear in the reply's length, with repaints throttled.

Finished blocks (ended by a blank line outside a code fence) are rendered once and written to the
scrollback. Only the open block is re-rendered, in a small live region at the bottom that is erased and
redrawn at most `refresh_per_second` times. Writes are batched per repaint, so a fast stream costs one
terminal write per tick whatever the chunk size, and a slow terminal never holds the stream back for more
than that write.
"""

from __future__ import annotations

import re
import threading
import time

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from framework_core.ui.markdown_render import DEFAULT_CODE_THEME, MarkdownRenderer, closes_fence

HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def rows_after_resize(cells: list[int], width: int) -> int:
    """Rows that lines of these widths take once the terminal re-wrapped them at `width`."""
    return sum(max(1, -(-cells_wide // max(width, 1))) for cells_wide in cells)


class MarkdownStream:
    def __init__(self, console: Console, *, live: bool = True, refresh_per_second: float = 8,
                 code_theme: str = DEFAULT_CODE_THEME) -> None:
        self.console = console
        self.renderer = MarkdownRenderer(console, code_theme=code_theme)
        self.use_live = live and console.is_terminal and not console.is_dumb_terminal
        self.min_interval = 1.0 / refresh_per_second
        self._pending: list[str] = []  # pieces of the line still open (joined only when needed)
        self._block: list[str] = []  # lines of the open block
        self._done: list[str] = []  # finished blocks not yet written
        self._in_fence = False
        self._fence = ""
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
        with self._lock:
            if "\n" in text:  # only the new piece is searched: a long line costs linear time, not quadratic
                lines = ("".join(self._pending) + text).split("\n")
                last = lines.pop()
                self._pending = [last] if last else []
                for line in lines:
                    self._line(line)
            else:
                self._pending.append(text)
            if not self.use_live:
                self._write(self._take_done())
                return
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

    def _line(self, line: str) -> None:
        if self._in_fence:
            self._block.append(line)
            self._in_fence = not closes_fence(line, self._fence)
            return
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):  # at any indent: fences inside list items
            self._in_fence = True
            self._fence = stripped[:len(stripped) - len(stripped.lstrip(stripped[0]))]
        elif not stripped:
            self._flush_block()
            return
        self._block.append(line)

    def _flush_block(self) -> None:
        if self._block:
            self._done.append("\n".join(self._block))
            self._block = []

    # -- output -----------------------------------------------------------------------------------
    def _take_done(self) -> str:
        """Render the finished blocks once, as text ready for the scrollback."""
        if not self._done:
            return ""
        width = self.console.width
        parts: list[str] = []
        for block in self._done:
            if self._printed:
                parts.append("\n")
            parts.append("\n".join(self.renderer.render(block, width)) + "\n")
            self._printed += 1
        self._done = []
        return "".join(parts)

    def _open_lines(self, width: int, height: int) -> list[str]:
        if len(self._pending) > 1:
            self._pending = ["".join(self._pending)]
        if not self._block and not self._pending:
            return []
        # Only the bottom of a long open block is visible, so only its bottom is rendered: a repaint costs
        # the same however long the block grows (the whole block is rendered once, when it is finished).
        keep = 2 * height
        head = self._block[:1] if self._in_fence else []
        body = self._block[max(len(head), len(self._block) - keep):] + self._pending
        text = "\n".join(body)
        if len(text) > 4 * width * height:
            text = text[-4 * width * height:]
        lines = self.renderer.render("\n".join(head + [text]), width)
        if self._printed:
            lines = [""] + lines
        return lines[-max(height - 1, 1):]

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
        width, height = self.console.width, self.console.height
        out = self._clear_region() + self._take_done()
        lines = self._open_lines(width, height)
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
            self._block.append("".join(self._pending))
            self._pending = []
        self._flush_block()
        out = self._clear_region() + self._take_done()
        if self.use_live:
            out += SHOW_CURSOR
        self._write(out)

    def abort(self, note: str | None = None) -> None:
        self.finish()
        if note:
            self.console.print(Text(note, style="dim"))
