"""The workspace as a command left it: its overlay's upper directory over the real workspace, read only.

This is the `Tree` the gate (`gate.py`) judges a change set against: what kind of node a relative path is after
the command, and a file's bytes (bounded). An entry in the upper directory wins; a whiteout (a character device
0:0) is a deletion; below a folder the command made new, replaced or marked opaque nothing of the real
workspace shows through.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from framework_core.sandbox.gate import Kind

READ_LIMIT = 1 << 20  # a git config or pointer larger than this is not judged: control


def _kind(st: os.stat_result) -> Kind:
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    return "other"


@dataclass
class AfterTree:
    upper: Path
    workspace: Path
    fresh: set[str] = field(default_factory=set)  # folders nothing of the workspace shows through
    _cache: dict[str, tuple[Kind, str | None, bool]] = field(default_factory=dict)

    def _where(self, rel: str) -> tuple[Kind, str | None, bool]:
        """(kind, the full path holding it, whether the workspace shows through below it). Parents are
        resolved first, top down, so a deep path costs no recursion."""
        if rel in self._cache:
            return self._cache[rel]
        todo = [rel]
        parent = os.path.dirname(rel)
        while rel and parent not in self._cache:
            todo.append(parent)
            if not parent:
                break
            parent = os.path.dirname(parent)
        for item in reversed(todo):
            self._cache[item] = self._one(item)
        return self._cache[rel]

    def _one(self, rel: str) -> tuple[Kind, str | None, bool]:
        through = True
        if rel:
            pk, _, pthrough = self._cache[os.path.dirname(rel)]
            if pk != "dir":
                return ("absent", None, False)
            through = pthrough
        up = os.path.join(self.upper, rel) if rel else str(self.upper)
        try:
            st: os.stat_result | None = os.lstat(up)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        if st is not None:
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout
                return ("absent", None, False)
            kind = _kind(st)
            return (kind, up, through and kind == "dir" and rel not in self.fresh)
        if not through:
            return ("absent", None, False)
        full = os.path.join(self.workspace, rel) if rel else str(self.workspace)
        try:
            kind = _kind(os.lstat(full))
        except (FileNotFoundError, NotADirectoryError):
            return ("absent", None, False)
        return (kind, full, kind == "dir")

    def kind(self, rel: str) -> Kind:
        return self._where(rel)[0]

    def read(self, rel: str) -> bytes | None:
        kind, full, _ = self._where(rel)
        if kind != "file" or full is None:
            return None
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            data = os.read(fd, READ_LIMIT + 1)
        finally:
            os.close(fd)
        return None if len(data) > READ_LIMIT else data
