"""Finding text in a file the way the edit tools do: by content, tolerant of trailing whitespace and of Unicode
punctuation lookalikes (typographic quotes and dashes, odd spaces), never by line numbers. Pure.

`apply_hunks` applies an Update's hunks to a file's lines (each line kept with its own ending), or raises
`HunkMismatch` naming the hunk and why; `nearest_line` finds the line most like a wanted one, for a refusal the
model can act on.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Callable

from framework_core.tools.patch_format import Hunk

LOOKALIKES = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
})

# strictest first: the first way that finds the lines decides where they are
LEVELS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("exactly", lambda s: s),
    ("ignoring trailing whitespace", str.rstrip),
    ("ignoring trailing whitespace and punctuation lookalikes", lambda s: s.rstrip().translate(LOOKALIKES)),
)


class HunkMismatch(ValueError):
    """A hunk whose lines are not in the file; the message says which hunk and what is there instead."""

    def __init__(self, hunk: int, why: str) -> None:
        super().__init__(f"hunk {hunk} does not match: {why}")
        self.hunk, self.why = hunk, why


@dataclass
class Line:
    text: str  # without its ending
    end: str  # "\n", "\r\n" or "" (the last line of a file without a final newline)


def split_lines(text: str) -> list[Line]:
    out = []
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        out.append(Line(body, raw[len(body):]))
    return out


def join_lines(lines: list[Line]) -> str:
    return "".join(line.text + line.end for line in lines)


def seek(lines: list[str], wanted: list[str], start: int = 0, *, at_end: bool = False) -> tuple[int, str] | None:
    """(where `wanted` starts in `lines` at or after `start`, how it matched), or None."""
    n = len(wanted)
    if n == 0 or n > len(lines):
        return None
    for how, norm in LEVELS:
        want = [norm(w) for w in wanted]
        starts = list(range(start, len(lines) - n + 1))
        if at_end and starts:  # the end of the file first
            starts.insert(0, starts[-1])
        for i in starts:
            if all(norm(lines[i + k]) == want[k] for k in range(n)):
                return i, how
    return None


def nearest_line(lines: list[str], wanted: str, start: int = 0) -> tuple[int, str] | None:
    """(index, text) of the line most like `wanted` (at or after `start`), when one is at all alike."""
    key = wanted.strip()
    if not key:
        return None
    best: tuple[float, int] = (0.0, -1)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(key)
    for i in range(start, len(lines)):
        matcher.set_seq1(lines[i].strip())
        if matcher.real_quick_ratio() > best[0] and matcher.quick_ratio() > best[0]:
            ratio = matcher.ratio()
            if ratio > best[0]:
                best = (ratio, i)
    return (best[1], lines[best[1]]) if best[0] >= 0.5 else None


def apply_hunks(lines: list[Line], hunks: tuple[Hunk, ...] | list[Hunk], newline: str) -> tuple[list[Line], int, int]:
    """The file's lines after every hunk, in order (each found after the previous one), with (lines added,
    lines removed). Lines the hunks keep stay exactly as they were; added lines take `newline`."""
    texts = [line.text for line in lines]
    found: list[tuple[int, Hunk, list[tuple[str, str]]]] = []
    cursor = 0
    for n, hunk in enumerate(hunks, start=1):
        if hunk.context is not None:
            at = seek(texts, [hunk.context], cursor)
            if at is None:
                after = f" after line {cursor}" if cursor else ""
                raise HunkMismatch(n, f"its @@ line '{hunk.context}' is not in the file{after}"
                                   + _nearest(texts, hunk.context, cursor))
            cursor = at[0] + 1
        ops = list(hunk.ops)
        old = hunk.old
        if not old:  # only additions: after the @@ line, or at the end
            found.append((cursor if hunk.context is not None else len(texts), hunk, ops))
            continue
        at = seek(texts, old, cursor, at_end=hunk.at_end)
        while at is None and old and old[-1] == "" and ops and ops[-1] == (" ", ""):
            ops.pop()  # a blank line the patch's layout added after the hunk
            old = old[:-1]
            at = seek(texts, old, cursor, at_end=hunk.at_end) if old else None
        if at is None:
            raise HunkMismatch(n, _why(texts, hunk.old, cursor))
        found.append((at[0], hunk, ops))
        cursor = at[0] + len(old)
    out: list[Line] = []
    pos = added = removed = 0
    for start, _hunk, ops in found:
        out += lines[pos:start]
        pos = start
        for op, text in ops:
            if op == " ":
                out.append(lines[pos])
                pos += 1
            elif op == "-":
                pos += 1
                removed += 1
            else:
                out.append(Line(text, newline))
                added += 1
    out += lines[pos:]
    _fix_ends(out, lines, newline)
    return out, added, removed


def _fix_ends(out: list[Line], before: list[Line], newline: str) -> None:
    """Every line but the last ends in a newline; the last keeps the file's own choice (a final newline or not)."""
    for line in out[:-1]:
        if not line.end:
            line.end = newline
    if out:
        final = bool(before[-1].end) if before else True
        out[-1].end = (out[-1].end or newline) if final else ""


def _why(texts: list[str], old: list[str], cursor: int) -> str:
    """What is in the file instead: the longest start of the hunk that is there and the line after it that is
    not, or the line most like the hunk's first."""
    for k in range(len(old) - 1, 0, -1):
        at = seek(texts, old[:k], cursor)
        if at is not None:
            i = at[0] + k
            there = f"line {i + 1} is '{texts[i]}'" if i < len(texts) else "the file ends there"
            return (f"its first {k} lines are at line {at[0] + 1}, but its line {k + 1} ('{old[k]}') is not what "
                    f"follows: {there}")
    return f"its first line '{old[0]}' is not in the file" + (f" after line {cursor}" if cursor else "") + \
        _nearest(texts, old[0], cursor)


def _nearest(texts: list[str], wanted: str, start: int) -> str:
    near = nearest_line(texts, wanted, start)
    return f"; the nearest is line {near[0] + 1}: '{near[1]}'" if near else ""
