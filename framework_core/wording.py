"""Small helpers for the words LACA shows: counts read "1 line", "2 lines"; sizes "41.3 KB"; hints name the command
as the user types it."""

from __future__ import annotations

import os
from pathlib import Path


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`plural(1, "line")` is "1 line"; `plural(3, "line")` is "3 lines"; thousands get separators."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"


def size_words(n: int) -> str:
    """A size as a reader takes it in: "512 bytes", "41.3 KB", "2.0 MB" (decimal units)."""
    if n < 1000:
        return f"{n:,} bytes"
    return f"{n / 1e3:.1f} KB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"


def invocation(args: str = "") -> str:
    """How the user starts LACA with `args`: `laca ARGS`, or `make run ARGS="ARGS"` when `make run` started
    this process (its parent is make), so that every hint can be typed as it is shown."""
    if os.environ.get("MAKELEVEL"):
        try:
            parent = Path(f"/proc/{os.getppid()}/comm").read_text().strip()
        except OSError:
            parent = ""
        if parent in ("make", "gmake"):
            return f'make run ARGS="{args}"' if args else "make run"
    return f"laca {args}".strip()


#: What the model reads for the calls of a turn the user stopped with Esc (the renderer matches them too).
STOPPED_HERE = ("Not run: the user declined this call and stopped the turn (Esc). Nothing after it in this reply ran; "
                "the user will say what to do instead in their next message.")
STOPPED = "Not run: the user stopped the turn (Esc) before this call; it was not asked about."
