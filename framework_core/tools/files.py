"""Workspace paths, atomic writes, undo history and diff previews for the file tools."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAX_UNDO_ENTRIES = 50
MAX_UNDO_BYTES = 50 * 1024 * 1024


def resolve_in_workspace(path: str, workspace: Path) -> tuple[Path, bool]:
    """Resolve `..` and symlinks; return the real path and whether it lies inside the workspace."""
    raw = Path(os.path.expanduser(path))
    full = raw if raw.is_absolute() else workspace / raw
    real = Path(os.path.realpath(full))
    ws = Path(os.path.realpath(workspace))
    return real, real == ws or ws in real.parents


def atomic_write(path: Path, data: bytes, *, append: bool = False) -> int:
    """Write via a temporary file, fsync and rename; keep the existing file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode: int | None = None
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
        if append:
            data = path.read_bytes() + data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".laca-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(data)


@dataclass
class FileChange:
    path: Path
    previous: bytes | None  # None: the file did not exist
    mode: int | None


class FileHistory:
    """File changes made by the agent in this session, newest last, for /undo."""

    def __init__(self) -> None:
        self._changes: list[FileChange] = []

    def record(self, path: Path) -> None:
        previous = path.read_bytes() if path.is_file() else None
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else None
        self._changes.append(FileChange(path, previous, mode))
        while len(self._changes) > MAX_UNDO_ENTRIES or sum(len(c.previous or b"") for c in self._changes) > MAX_UNDO_BYTES:
            self._changes.pop(0)

    def __len__(self) -> int:
        return len(self._changes)

    def undo(self, n: int = 1) -> list[str]:
        done: list[str] = []
        for _ in range(min(n, len(self._changes))):
            change = self._changes.pop()
            if change.previous is None:
                if change.path.exists():
                    change.path.unlink()
                done.append(f"Removed {change.path} (it was created by the agent)")
            else:
                atomic_write(change.path, change.previous)
                if change.mode is not None:
                    os.chmod(change.path, change.mode)
                done.append(f"Restored {change.path} ({len(change.previous):,} bytes)")
        return done


def unified_diff_preview(old: str, new: str, path: str, max_lines: int = 400) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm=""))
    if not lines:
        return "(no changes: the new content is identical)"
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines] + [f"… {hidden} more diff lines not shown"]
    return "\n".join(lines)
