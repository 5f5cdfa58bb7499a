"""Console construction: width follows the terminal; NO_COLOR and a non-TTY stdout give plain output."""

from __future__ import annotations

import os
import sys
from typing import IO

from rich.console import Console
from rich.theme import Theme

THEME = Theme({
    "laca.dim": "dim", "laca.ok": "green", "laca.err": "red", "laca.warn": "yellow", "laca.info": "cyan",
    "laca.tool": "bold cyan", "laca.danger": "bold white on red", "laca.brief": "italic",
})


def make_console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    stream = file or (sys.stderr if stderr else sys.stdout)
    plain = bool(os.environ.get("NO_COLOR")) or not stream.isatty()
    return Console(file=stream, theme=THEME, no_color=plain, highlight=False, soft_wrap=False,
                   emoji=False, color_system=None if plain else "auto")
