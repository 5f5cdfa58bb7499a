"""Console construction: width follows the terminal; NO_COLOR and a non-TTY stdout give plain output."""

from __future__ import annotations

import os
import sys
from typing import IO

from typing import Iterable

from rich.console import Console
from rich.segment import Segment
from rich.theme import Theme

from framework_core.ui.safe_text import visible

THEME = Theme({
    "laca.dim": "dim", "laca.ok": "green", "laca.err": "red", "laca.warn": "yellow", "laca.info": "cyan",
    "laca.tool": "bold cyan", "laca.danger": "bold white on red", "laca.brief": "italic",
})


class SafeConsole(Console):
    """The last line of defence: text segments cannot carry control characters to the terminal.

    Untrusted strings are made visible where they are built (so layout counts them right); this catches
    any that were missed. Control segments (cursor moves of a live display) pass untouched.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(visible(segment.text), segment.style) for segment in buffer)


def make_console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    stream = file or (sys.stderr if stderr else sys.stdout)
    plain = bool(os.environ.get("NO_COLOR")) or not stream.isatty()
    return SafeConsole(file=stream, theme=THEME, no_color=plain, highlight=False, soft_wrap=False,
                       emoji=False, color_system=None if plain else "auto")
