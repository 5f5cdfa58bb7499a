"""Streamed Markdown in time linear in the reply's length.

Finished blocks (ended by a blank line outside a code fence) are rendered once and go to the scrollback;
only the open tail is re-rendered, inside a transient Live display, at most `refresh_per_second` times.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

BATCH_CHARS = 8192  # finished blocks are rendered together once this much has accumulated

class MarkdownStream:
    def __init__(self, console: Console, *, live: bool = True, refresh_per_second: float = 8,
                 code_theme: str = "monokai") -> None:
        self.console = console
        self.code_theme = code_theme
        self.use_live = live and console.is_terminal
        self.min_interval = 1.0 / refresh_per_second
        self._parts: list[str] = []
        self._pending = ""  # text after the last complete line
        self._block: list[str] = []  # lines of the open block
        self._done: list[str] = []  # finished blocks not yet printed
        self._done_chars = 0
        self._in_fence = False
        self._fence = ""
        self._printed = 0
        self._live: Any = None
        self._last_paint = 0.0
        self._dirty = False

    # -- input ------------------------------------------------------------------------------------
    def feed(self, text: str) -> None:
        if not text:
            return
        data = self._pending + text
        lines = data.split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line)
        if self._done_chars >= BATCH_CHARS:
            self._emit_done()
        self._dirty = True
        self._paint()

    def _line(self, line: str) -> None:
        stripped = line.lstrip()
        if self._in_fence:
            self._block.append(line)
            if stripped.startswith(self._fence) and stripped.strip() == self._fence[: len(stripped.strip())] and \
                    stripped.strip().startswith(self._fence):
                self._in_fence = False
            return
        if stripped.startswith("```") or stripped.startswith("~~~"):
            self._in_fence = True
            self._fence = stripped[:3]
            self._block.append(line)
            return
        if not stripped:
            self._flush_block()
            return
        self._block.append(line)

    def _flush_block(self) -> None:
        if not self._block:
            return
        block = "\n".join(self._block)
        self._block = []
        self._done.append(block)
        self._done_chars += len(block)

    def _emit_done(self) -> None:
        if self._done:
            text = "\n\n".join(self._done)
            self._done, self._done_chars = [], 0
            self._emit(text)

    def _emit(self, block: str) -> None:
        target = self._live.console if self._live is not None else self.console
        if self._printed:
            target.print()
        target.print(Markdown(block, code_theme=self.code_theme))
        self._printed += 1

    # -- painting the open tail ----------------------------------------------------------------------
    def _tail(self) -> str:
        open_block = "\n".join(self._block + ([self._pending] if self._pending else []))
        return "\n\n".join(self._done + [open_block])

    def _paint(self, force: bool = False) -> None:
        if not self.use_live or not self._dirty:
            return
        now = time.monotonic()
        if not force and now - self._last_paint < self.min_interval:
            return
        tail = self._tail()
        if self._live is None:
            from rich.live import Live

            self._live = Live(console=self.console, transient=True, auto_refresh=False,
                              redirect_stdout=False, redirect_stderr=False, vertical_overflow="visible")
            self._live.__enter__()
        self._live.update(Markdown(tail, code_theme=self.code_theme) if tail.strip() else Text(""), refresh=True)
        self._last_paint = now
        self._dirty = False

    def _stop_live(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.update(Text(""), refresh=True)
            live.__exit__(None, None, None)

    # -- ending ---------------------------------------------------------------------------------------
    def finish(self) -> None:
        if self._pending:
            self._block.append(self._pending)
            self._pending = ""
        self._stop_live()
        self._flush_block()
        self._emit_done()

    def abort(self, note: str | None = None) -> None:
        self.finish()
        if note:
            self.console.print(Text(note, style="dim"))
