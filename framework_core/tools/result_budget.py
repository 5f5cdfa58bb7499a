"""The one bound on what a tool result sends the model.

A long result keeps its head and its tail; the cut is marked in place with the number of lines and bytes left
out and where the whole text was saved, so a follow-up read can page it. Every tool's text passes through
`bound`; `budget_for_window` makes the budget smaller for a model with a small context window.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from framework_core.wording import plural

DEFAULT_BUDGET = 10_000  # characters of one result the model receives
MIN_BUDGET = 1_000
WINDOW_SHARE = 0.10  # one result takes at most this share of the model's context window
CHARS_PER_TOKEN = 4
SNAP = 0.2  # cut at a line end when one lies within this share of the kept part
#: How the marker tells the model to read a cut part; {path}, {start} and {end} are filled in.
READ_HINT = "read them with executeBashCommand: sed -n '{start},{end}p' {path}"

#: Saves the whole text and returns where it went (raises OSError when it cannot).
Saver = Callable[[str], str]


@dataclass(frozen=True)
class Bounded:
    """What the model receives of one result, and what was left out of it."""

    text: str
    cut_lines: int = 0
    cut_bytes: int = 0
    saved_path: str | None = None

    @property
    def cut(self) -> bool:
        return self.cut_bytes > 0


def budget_for_window(configured: int, context_window_tokens: int | None) -> int:
    """The configured budget, made smaller when the model's context window is small."""
    if not context_window_tokens:
        return configured
    share = int(context_window_tokens * CHARS_PER_TOKEN * WINDOW_SHARE)
    return max(MIN_BUDGET, min(configured, share))


def bound(text: str, budget: int = DEFAULT_BUDGET, save: Saver | None = None) -> Bounded:
    """Keep `text` within `budget` characters: head and tail, with the cut marked where it was made."""
    if len(text) <= budget:
        return Bounded(text)
    saved, save_error = _save(text, save)
    reserve = 160 + 2 * len(saved or "") + len(save_error)
    while True:  # the marker's own length depends on the counts; shrink until the whole fits
        keep = max(budget - reserve, 2)
        head, tail = _head(text, keep - keep // 2), _tail(text, keep // 2)
        omitted = text[len(head):len(text) - len(tail)]
        first = head.count("\n") + 1
        marker = _marker(omitted, first, _lines(text), saved, save_error)
        out = head + ("" if head.endswith("\n") else "\n") + marker + tail
        if len(out) <= budget or keep == 2:
            return Bounded(out, _lines(omitted), len(omitted.encode("utf-8", errors="replace")), saved)
        reserve += len(out) - budget


def _save(text: str, save: Saver | None) -> tuple[str | None, str]:
    if save is None:
        return None, " the full text was not kept"
    try:
        return save(text), ""
    except OSError as exc:
        return None, f" the full text could not be saved ({exc.strerror or exc})"


def _head(text: str, n: int) -> str:
    head = text[:n]
    nl = head.rfind("\n")
    return head[:nl + 1] if nl >= n * (1 - SNAP) else head


def _tail(text: str, n: int) -> str:
    if n <= 0:
        return ""
    tail = text[-n:]
    nl = tail.find("\n")
    return tail[nl + 1:] if 0 <= nl <= n * SNAP else tail


def _lines(text: str) -> int:
    """Lines in `text`, whole or in part (a last line without a newline counts)."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _marker(omitted: str, first: int, total_lines: int, saved: str | None, save_error: str) -> str:
    lines = _lines(omitted)
    size = len(omitted.encode("utf-8", errors="replace"))
    last = first + max(lines - 1, 0)
    where = f"line {first:,}" if last == first else f"lines {first:,}-{last:,}"
    if saved:
        how = " " + READ_HINT.format(start=first, end=last, path=saved)
    else:
        how = save_error
    return f"[… {plural(lines, 'line')} ({plural(size, 'byte')}, {where} of {total_lines:,}) left out;{how} …]\n"


def saver(directory: Path, prefix: str = "tool-output") -> Saver:
    """A Saver writing each text to its own private file in `directory` (made on first use)."""
    counter = itertools.count(1)

    def save(text: str) -> str:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = directory / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(counter)}.txt"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
        return str(path)

    return save
