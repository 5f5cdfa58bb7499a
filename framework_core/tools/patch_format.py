"""The patch format `applyPatch` takes (the one Codex's apply_patch uses), parsed into file operations. Pure.

```
*** Begin Patch
*** Add File: docs/new.md
+every line of the new file, each after a +
*** Update File: src/app.py
*** Move to: src/main.py          (optional: the file is renamed as well)
@@ def handler():                 (optional: a line to find first; the hunk's lines come after it)
 a context line, as it is
-a line taken out
+a line put in
*** End of File                   (optional: the hunk sits at the end of the file)
*** Delete File: old.txt
*** End Patch
```

Hunks are found by their context and removed lines, never by line numbers (a `@@ -12,7 +12,8 @@` header is
read as a bare `@@`). Matching lives in `patch_match.py`; what the tool does with the result in `apply_patch.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE, MOVE = "*** Add File:", "*** Delete File:", "*** Update File:", "*** Move to:"
END_OF_FILE = "*** End of File"
UNIFIED_HEADER = re.compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@ ?")


class PatchError(ValueError):
    """A patch that cannot be read; `line` is the patch's own line number (1-based), 0 for the whole."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line} of the patch: {message}" if line else message)
        self.line = line


@dataclass(frozen=True)
class Hunk:
    """One `@@` part of an Update: lines kept (' '), removed ('-') and added ('+'), in order."""

    ops: tuple[tuple[str, str], ...]
    context: str | None = None  # the text after `@@`: a line to find before the hunk's own lines
    at_end: bool = False  # `*** End of File`: the hunk's lines end the file
    line: int = 0  # where it starts in the patch

    @property
    def old(self) -> list[str]:
        return [text for op, text in self.ops if op != "+"]

    @property
    def new(self) -> list[str]:
        return [text for op, text in self.ops if op != "-"]


@dataclass(frozen=True)
class FileOp:
    action: Literal["add", "delete", "update"]
    path: str
    line: int  # where it starts in the patch
    lines: tuple[str, ...] = ()  # an added file's lines
    move_to: str | None = None
    hunks: tuple[Hunk, ...] = field(default_factory=tuple)


def parse(text: str) -> list[FileOp]:
    """The patch's file operations, in order; PatchError naming the line for anything else."""
    lines = _unwrapped(text.strip().splitlines())
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"a patch starts with the line '{BEGIN}'", 1)
    if len(lines) < 2 or lines[-1].strip() != END:
        raise PatchError(f"a patch ends with the line '{END}'", len(lines))
    ops: list[FileOp] = []
    i, last = 1, len(lines) - 1
    while i < last:
        line = lines[i].strip()
        if not line:
            i += 1
            continue
        op, i = _file_op(lines, i, last)
        ops.append(op)
    if not ops:
        raise PatchError("the patch has no file in it (Add File, Update File or Delete File)")
    seen: dict[str, int] = {}
    for op in ops:
        for path in (op.path, op.move_to):
            if path is not None and path in seen:
                raise PatchError(f"{path} is named twice (first at line {seen[path]}); put every change to a file "
                                 "in one Update", op.line)
            if path is not None:
                seen[path] = op.line
    return ops


def _unwrapped(lines: list[str]) -> list[str]:
    """The patch without a here-document around it (`<<'EOF'` … `EOF`), which some models add."""
    if len(lines) >= 4 and re.fullmatch(r"<<-?\s*['\"]?EOF['\"]?", lines[0].strip()) and lines[-1].strip() == "EOF":
        return lines[1:-1]
    return lines


def _path(line: str, marker: str, number: int) -> str:
    path = line.strip()[len(marker):].strip()
    if not path:
        raise PatchError(f"'{marker}' needs a file path after it", number)
    return path


def _file_op(lines: list[str], i: int, last: int) -> tuple[FileOp, int]:
    line, number = lines[i].strip(), i + 1
    if line.startswith(ADD):
        path, body, i = _path(line, ADD, number), [], i + 1
        while i < last and lines[i].startswith("+"):
            body.append(lines[i][1:])
            i += 1
        return FileOp("add", path, number, tuple(body)), i
    if line.startswith(DELETE):
        return FileOp("delete", _path(line, DELETE, number), number), i + 1
    if line.startswith(UPDATE):
        path, i = _path(line, UPDATE, number), i + 1
        move_to = None
        if i < last and lines[i].strip().startswith(MOVE):
            move_to, i = _path(lines[i], MOVE, i + 1), i + 1
        hunks: list[Hunk] = []
        while i < last and not lines[i].startswith("***"):
            if not lines[i].strip() and not hunks:
                i += 1
                continue
            hunk, i = _hunk(lines, i, last, first=not hunks)
            hunks.append(hunk)
        if not hunks and move_to is None:
            raise PatchError(f"the Update of {path} has no hunk (@@ and lines starting with ' ', '-' or '+')",
                             number)
        return FileOp("update", path, number, move_to=move_to, hunks=tuple(hunks)), i
    raise PatchError(f"'{line[:80]}' is not a patch line here; a file starts with '{ADD} PATH', '{UPDATE} PATH' "
                     f"or '{DELETE} PATH'", number)


def _hunk(lines: list[str], i: int, last: int, *, first: bool) -> tuple[Hunk, int]:
    start = i + 1
    context: str | None = None
    head = lines[i]
    if head.startswith("@@"):
        rest = UNIFIED_HEADER.sub("", head) if UNIFIED_HEADER.match(head) else head[2:]
        context = rest.strip() or None
        i += 1
    elif not first:
        raise PatchError(f"a hunk starts with '@@' (got '{head[:80]}')", start)
    ops: list[tuple[str, str]] = []
    at_end = False
    while i < last:
        line = lines[i]
        if line.strip() == END_OF_FILE:
            at_end, i = True, i + 1
            break
        if line.startswith("@@") or line.startswith("***"):
            break
        if line == "" or line[0] in " +-":
            ops.append((line[:1] or " ", line[1:]))
        else:
            raise PatchError(f"'{line[:80]}' does not start with ' ' (a line kept), '-' (removed) or '+' (added)",
                             i + 1)
        i += 1
    if not ops:
        raise PatchError("the hunk has no lines", start)
    return Hunk(tuple(ops), context, at_end, start), i
