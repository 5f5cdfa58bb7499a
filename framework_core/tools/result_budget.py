"""The one bound on what a tool result sends the model.

A long result keeps its head and its tail; the cut is marked in place with the number of lines and bytes left
out and how to read them (`readFile` with a line range), so the model pages instead of having everything
resent with every later request. Every tool's text passes through here: `bound` for a text in memory (MCP
content, a short command output), `bound_file` for a text on disk (a command's saved output, a file that
`readFile` reads, whole or a range of its lines, never loaded whole), `bound_pieces` for the head and tail a
command's capture kept when its whole output could not be saved. `budget_for_window` makes the budget
smaller for a model with a small context window.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, AnyStr, Callable, Generic

from framework_core.estimate import token_chars
from framework_core.wording import plural

if TYPE_CHECKING:
    from framework_core.lial_core import ToolResult

DEFAULT_BUDGET = 10_000  # characters of one result the model receives
MIN_BUDGET = 1_000
WINDOW_SHARE = 0.10  # one result takes at most this share of the model's context window
SNAP = 0.2  # cut at a line end when one lies within this share of the kept part
CHUNK = 1 << 20

#: Saves the whole text and returns where it went (raises OSError when it cannot).
Saver = Callable[[str], str]


@dataclass(frozen=True)
class Bounded:
    """What the model receives of one result, and what was left out of it."""

    text: str
    cut_lines: int = 0
    cut_bytes: int = 0
    saved_path: str | None = None
    first_cut: int = 0  # the first line left out (0: nothing was)
    total_lines: int | None = None  # lines of the whole (a file's, for a range of it), when known

    @property
    def cut(self) -> bool:
        return self.cut_bytes > 0

    def summary(self) -> str:
        """What was cut, in a few words for a result's header line."""
        if not self.cut:
            return ""
        if self.total_lines is None or not self.first_cut:
            return f"{plural(self.cut_bytes, 'byte')} left out"
        return f"{self.cut_lines:,} of {plural(self.total_lines, 'line')} left out"


def budget_for_window(configured: int, context_window_tokens: int | None) -> int:
    """The configured budget, made smaller when the model's context window is small."""
    if not context_window_tokens:
        return configured
    share = int(token_chars(context_window_tokens) * WINDOW_SHARE)
    return max(MIN_BUDGET, min(configured, share))


# ---- the whole, as far as a cut needs to know it ----------------------------------------------------

@dataclass
class _Whole(Generic[AnyStr]):
    """A long text (str) or byte string: its first and last units (at least a budget's worth, and one more
    at the end), its size, its size in bytes and how many newlines it holds (None: not known)."""

    prefix: AnyStr
    suffix: AnyStr
    size: int
    nbytes: int
    newlines: int | None

    def nl(self) -> AnyStr:
        return "\n" if isinstance(self.prefix, str) else b"\n"


@dataclass(frozen=True)
class _Where:
    """Where the whole lies and how its lines are numbered, for the marker."""

    path: str | None = None  # where the whole can be read (saved, or the file itself)
    note: str = ""  # why it cannot be read, or a caveat ("only partly saved ...")
    first_line: int = 1  # number of the whole's first line (a range of a file starts later)
    total_lines: int | None = None  # the file's lines, for a range; None: the whole's own count
    numbered: bool = False  # each line shown after its number and a tab (`  12\ttext`), as readFile gives them


def _nbytes(part: str | bytes) -> int:
    return len(part) if isinstance(part, bytes) else len(part.encode("utf-8", errors="replace"))


def _text(part: str | bytes) -> str:
    return part if isinstance(part, str) else part.decode("utf-8", errors="replace")


def _head(text: AnyStr, n: int, nl: AnyStr) -> AnyStr:
    head = text[:n]
    cut = head.rfind(nl)
    return head[:cut + 1] if cut >= n * (1 - SNAP) else head


def _tail(text: AnyStr, n: int, nl: AnyStr) -> AnyStr:
    if n <= 0:
        return text[:0]
    tail = text[-n:]
    cut = tail.find(nl)
    return tail[cut + 1:] if 0 <= cut <= n * SNAP else tail


def _cut(whole: _Whole, budget: int, where: _Where) -> Bounded:
    """Head and tail of `whole` within `budget` units, the part between replaced by a marker."""
    nl = whole.nl()
    reserve = 200 + len(where.path or "") + len(where.note)
    while True:  # the marker's own length depends on the counts; shrink until the whole fits
        keep = max(budget - reserve, 2)
        head, tail = _head(whole.prefix, keep - keep // 2, nl), _tail(whole.suffix, keep // 2, nl)
        cut_bytes = whole.nbytes - _nbytes(head) - _nbytes(tail)
        first = where.first_line + head.count(nl)
        lines, total = None, where.total_lines
        if whole.newlines is not None:
            ends_line = whole.suffix[len(whole.suffix) - len(tail) - 1:][:1] == nl
            lines = whole.newlines - head.count(nl) - tail.count(nl) + (0 if ends_line else 1)
            if total is None:
                total = where.first_line - 1 + whole.newlines + (0 if whole.suffix.endswith(nl) else 1)
        marker = _marker(cut_bytes, first, lines, total, where, one_long_line=lines == 1 and cut_bytes > keep)
        shown_head, shown_tail = _text(head), _text(tail)
        if where.numbered and whole.newlines is not None:
            last = where.first_line - 1 + whole.newlines + (0 if whole.suffix.endswith(nl) else 1)
            width = len(str(last))
            tail_lines = shown_tail.count("\n") + (0 if shown_tail.endswith("\n") or not shown_tail else 1)
            shown_head = number_lines(shown_head, where.first_line, width)
            shown_tail = number_lines(shown_tail, last - tail_lines + 1, width)
        out = shown_head + ("" if shown_head.endswith("\n") or not shown_head else "\n") + marker + shown_tail
        if len(out) <= budget or keep == 2:
            return Bounded(out, lines or 0, cut_bytes, where.path, first if lines is not None else 0, total)
        reserve += len(out) - budget


def _marker(cut_bytes: int, first: int, lines: int | None, total: int | None, where: _Where, *,
            one_long_line: bool = False) -> str:
    size = plural(cut_bytes, "byte")
    if lines is None:
        what = f"{size} left out"
    elif one_long_line:
        what = f"{size} of line {first:,}" + (f" of {total:,}" if total else "") + " left out"
    else:
        last = first + max(lines - 1, 0)
        span = f"line {first:,}" if last == first else f"lines {first:,}-{last:,}"
        what = f"{plural(lines, 'line')} ({size}) left out: {span}" + (f" of {total:,}" if total else "")
    how = ""
    if one_long_line:  # reading it by lines would show the same two ends again
        how = "; that line is longer than the output budget, so its middle cannot be read in parts"
    elif where.path and lines is not None:
        how = ". Read them with readFile " + json.dumps({"path": where.path, "offset": first, "limit": lines})
    elif where.path:
        how = f"; the whole is in {where.path}"
    note = f"; {where.note}" if where.note else ""
    return f"[… {what}{how}{note} …]\n"


# ---- entry points -----------------------------------------------------------------------------------

def bound(text: str, budget: int = DEFAULT_BUDGET, save: Saver | None = None, *, path: str | None = None,
          note: str = "") -> Bounded:
    """Keep `text` within `budget` characters: head and tail, with the cut marked where it was made. The whole
    is saved with `save` for paging, or already lies in `path`; `note` says where it is kept otherwise (a
    request that leaves out what the session keeps)."""
    if len(text) <= budget:
        return Bounded(text)
    if path is None and (save is not None or not note):
        path, why = _save(text, save)
        note = "; ".join(part for part in (note, why) if part)
    whole = _Whole(text[:budget], text[-(budget + 1):], len(text), _nbytes(text), text.count("\n"))
    return _cut(whole, budget, _Where(path, note))


def bound_result(result: "ToolResult", budget: int, save: Saver | None) -> "ToolResult":
    """Any tool result within the budget as the model reads it: the longest texts in it (an MCP server's
    error, a body, an output no handler bounded) cut to head and tail, the whole saved for paging. A result
    already within the budget is returned as it is: this is the last bound every result passes, whatever
    produced it. The header and notes around an output its handler already bounded are allowed
    `MIN_BUDGET` characters beyond the budget, so that output keeps its own cut and marker."""
    from framework_core.lial_core import ToolResult

    over = len(result.to_model_text()) - budget
    if over <= MIN_BUDGET:
        return result
    data = dict(result.data)
    texts = sorted((k for k, v in data.items() if isinstance(v, str)), key=lambda k: -len(data[k]))
    for key in texts:
        value = data[key]
        if over <= 0 or len(value) <= MIN_BUDGET // 4:
            break
        view = bound(value, max(MIN_BUDGET // 4, len(value) - over), save)
        data[key] = view.text
        over -= len(value) - len(view.text)
    return ToolResult(result.request_id, result.tool_name, result.status, data)


def bound_pieces(head: bytes, tail: bytes, total: int, budget: int, *, path: str | None = None,
                 note: str = "") -> Bounded:
    """The head and tail a capture kept of `total` bytes (the middle is gone), within `budget`."""
    if total <= len(head) + len(tail):
        return bound((head + tail[len(head) + len(tail) - total:]).decode("utf-8", errors="replace"), budget,
                     path=path)
    return _cut(_Whole(head, tail, total, total, None), budget, _Where(path, note or "the whole was not kept"))


def _save(text: str, save: Saver | None) -> tuple[str | None, str]:
    if save is None:
        return None, "the full text was not kept"
    try:
        return save(text), ""
    except OSError as exc:
        return None, f"the full text could not be saved ({exc.strerror or exc})"


class RangeError(ValueError):
    """A line range that lies outside the file."""


def bound_file(path: str | Path, budget: int = DEFAULT_BUDGET, *, offset: int = 1, limit: int | None = None,
               shown_path: str | None = None, encoding: str = "utf-8", numbered: bool = False) -> Bounded:
    """Lines `offset`.. (`limit` of them, or to the end) of a text file, within `budget`. The file is read in
    pieces, never whole, and its lines are counted, so the marker and `total_lines` number them as the file
    does. `shown_path` is how the marker names the file; `numbered` puts each line's number before it (see
    `number_lines`). Raises OSError, RangeError."""
    with open(path, "rb") as fh:
        start, end, newlines, total = _scan(fh, offset, limit)
        size = end - start
        if offset > max(total, 1):
            raise RangeError(f"offset {offset:,} is past the end of the file ({plural(total, 'line')})")
        where = _Where(shown_path or str(path), first_line=offset, total_lines=total, numbered=numbered)
        fh.seek(start)
        width = len(str(offset + max(newlines, 1)))
        if size + (newlines + 1) * (width + 1) * numbered <= budget:
            text = fh.read(size).decode(encoding, errors="replace")
            return Bounded(number_lines(text, offset, width) if numbered else text, total_lines=total)
        prefix = fh.read(budget)
        fh.seek(end - budget - 1)
        suffix = fh.read(budget + 1)
    if encoding.replace("-", "").lower() != "utf8":
        prefix, suffix = (p.decode(encoding, errors="replace").encode() for p in (prefix, suffix))
    return _cut(_Whole(prefix, suffix, size, size, newlines), budget, where)


def number_lines(text: str, first: int, width: int) -> str:
    """Each line of `text` after its number (from `first`, right-aligned to `width`) and a tab: a form the model
    can cite and that no file line starts with by accident."""
    if not text:
        return text
    ends = text.endswith("\n")
    lines = text.split("\n")
    if ends:
        lines.pop()
    out = "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(lines, first))
    return out + "\n" if ends else out


def _scan(fh, offset: int, limit: int | None) -> tuple[int, int, int, int]:
    """One pass over a file: the byte offsets where line `offset` starts and where the range ends, the
    newlines inside the range, and the file's number of lines."""
    first = max(offset, 1)
    last = None if limit is None else first + max(limit, 0) - 1  # last line wanted
    start = 0 if first == 1 else None
    end: int | None = None
    seen = pos = 0  # newlines so far; bytes so far
    ended_with_nl = True
    while chunk := fh.read(CHUNK):
        count = chunk.count(b"\n")
        if start is None and seen + count >= first - 1:
            start = pos + _nth(chunk, first - 1 - seen) + 1
        if end is None and last is not None and seen + count >= last:
            end = pos + _nth(chunk, last - seen) + 1
        seen += count
        pos += len(chunk)
        ended_with_nl = chunk.endswith(b"\n")
    total = seen + (0 if ended_with_nl else 1)
    start = pos if start is None else start
    end = pos if end is None else end
    newlines = seen if start == 0 and end == pos else _count_between(fh, start, end)
    return start, end, newlines, total


def _nth(chunk: bytes, n: int) -> int:
    """Index of the n-th newline (1-based) of `chunk`; -1 for n == 0."""
    at = -1
    for _ in range(n):
        at = chunk.find(b"\n", at + 1)
    return at


def _count_between(fh, start: int, end: int) -> int:
    fh.seek(start)
    count, left = 0, end - start
    while left > 0 and (chunk := fh.read(min(CHUNK, left))):
        count += chunk.count(b"\n")
        left -= len(chunk)
    return count


def saver(directory: Path, prefix: str = "tool-output") -> Saver:
    """A Saver writing each text to its own private file in `directory` (made on first use)."""

    def save(text: str) -> str:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=f"{prefix}-", suffix=".txt", dir=directory)  # private: mode 0600
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
        return path

    return save


def save_bytes(directory: Path, data: bytes, prefix: str, suffix: str) -> str:
    """Save `data` (an image a tool returned) to its own private file in `directory`; returns its path.
    Raises OSError."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix=f"{prefix}-", suffix=suffix, dir=directory)  # private: mode 0600
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path
