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

from framework_core.sandbox.gate import Gate, Judged, Kind

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
    upper: Path | None  # None: the workspace as it is
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
        up = (os.path.join(self.upper, rel) if rel else str(self.upper)) if self.upper is not None else ""
        try:
            st: os.stat_result | None = os.lstat(up) if up else None
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


#: What git keeps in bulk: data, not walked when a folder becomes a repository.
BULK = ("objects", "refs", "logs")


def adopted_control(gate: Gate, workspace: Path, changed: set[str]) -> dict[str, Judged]:
    """Repositories the command completed (a folder that is shaped like a git directory only now, after the
    command added HEAD, objects/ or refs/ to it): the files already there become git's too, so each that git
    would act on (a config, a hook, alternates) is judged. Returns such a repository's folder -> the first of
    its files judged control; every change under it is then control too."""
    before = Gate(AfterTree(None, workspace), gate.workspace, gate.protected)
    out: dict[str, Judged] = {}
    for folder, shaped in list(gate.known_git_dirs().items()):
        if not shaped or os.path.basename(folder) == ".git" or before.is_git_dir(folder):
            continue
        found = _first_control(gate, workspace, folder, changed)
        if found is not None:
            out[folder] = found
    return out


def _first_control(gate: Gate, workspace: Path, folder: str, changed: set[str]) -> Judged | None:
    stack = [folder]
    while stack:
        rel_dir = stack.pop()
        full = os.path.join(workspace, rel_dir) if rel_dir else str(workspace)
        try:
            with os.scandir(full) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if rel in changed:
                continue
            if entry.is_dir(follow_symlinks=False):
                inner = rel[len(folder) + 1:] if folder else rel
                bulk = inner in BULK[1:] or (inner.startswith("objects/") and inner != "objects/info")
                if not bulk:
                    stack.append(rel)
                continue
            judged = gate.judge(rel)
            if judged.verdict == "control":
                return judged
    return None
