"""Workspace paths, atomic writes, undo history and diff previews for the file tools."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from framework_core.sandbox.undo_store import UndoStore



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


def write_with_undo(path: Path, data: bytes, *, append: bool, undo: "UndoStore | None",
                    label: str) -> tuple[int, str | None]:
    """Write-ahead, then act: the pre-image is saved and synced in the undo store before the file is touched.
    If saving fails, UndoError and nothing is written; a failed write leaves no entry. Returns (the file's new
    size, a notice from the store: older undo entries pruned, or that the file WAS written but its undo record
    could not be completed, e.g. on a full disk)."""
    if undo is None:
        return atomic_write(path, data, append=append), None
    entry = undo.begin(label, "writeFile")
    try:
        entry.save_preimage(path)
        entry.prepare()  # synced before the workspace is touched; UndoError when it cannot be
    except BaseException:
        entry.discard()
        raise
    try:
        written = atomic_write(path, data, append=append)
    except BaseException:
        entry.discard()
        raise
    return written, entry.commit()  # never raises for a failed record: the file is written, the notice says so


def unified_diff_preview(old: str, new: str, path: str, max_lines: int = 400) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm=""))
    if not lines:
        return "(no changes: the new content is identical)"
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines] + [f"… {hidden} more diff lines not shown"]
    return "\n".join(lines)
