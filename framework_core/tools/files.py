"""Workspace paths, atomic writes, undo history and diff previews for the file tools."""

from __future__ import annotations

import difflib
import os
import stat
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


def lexically_inside(path: str, workspace: Path) -> str | None:
    """`path` relative to the workspace when its text names a place beneath it (`..` taken as written), else
    None. Such a path is opened beneath the workspace (framework_core/tools/safe_open.py): a symlink met on
    the way may not lead out of it."""
    raw = os.path.expanduser(path)
    ws = os.path.abspath(workspace)
    full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(ws, raw))
    for base in dict.fromkeys((ws, os.path.realpath(ws))):
        if full == base:
            return "."
        if full.startswith(base.rstrip("/") + "/"):
            return full[len(base.rstrip("/")) + 1:]
    return None


def atomic_write(path: Path, data: bytes, *, append: bool = False, root: Path | None = None) -> int:
    """Write via a temporary file, fsync and rename; keep the existing file's mode. With `root`, `path` lies
    beneath it and is reached without following a symlink out of it; the temporary file is made in the
    folder's own descriptor and renamed there (nothing is looked up twice by name). A FIFO, device or socket
    at `path` is refused, never opened for writing."""
    from framework_core.tools import safe_open as so

    if root is not None:
        rel = os.path.relpath(path, os.path.realpath(root))
        parent_rel, name = os.path.split(rel)
        dir_fd = so.open_beneath(root, parent_rel or ".", os.O_RDONLY | os.O_DIRECTORY, make_dirs=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        name = path.name
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        mode, old = _existing(dir_fd, name, str(path), read=append)
        return _replace_in(dir_fd, name, old + data, mode)
    finally:
        os.close(dir_fd)


def _existing(dir_fd: int, name: str, shown: str, *, read: bool) -> tuple[int | None, bytes]:
    """(the mode of the regular file `name` in the folder, or None when there is none; its bytes if `read`)."""
    from framework_core.tools import safe_open as so

    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None, b""
    if stat.S_ISLNK(st.st_mode):
        return None, b""  # swapped for a symlink since it was checked: replaced, never followed
    if not stat.S_ISREG(st.st_mode):
        raise so.NotRegular(shown, so.kind_of(st.st_mode))
    if not read:
        return stat.S_IMODE(st.st_mode), b""
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    so.regular_only(fd, shown)
    with os.fdopen(fd, "rb") as fh:
        return stat.S_IMODE(os.fstat(fh.fileno()).st_mode), fh.read()


def _replace_in(dir_fd: int, name: str, data: bytes, mode: int | None) -> int:
    import secrets

    tmp = f".{name}.{secrets.token_hex(4)}.laca-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.fchmod(fh.fileno(), mode)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    return len(data)


def write_with_undo(path: Path, data: bytes, *, append: bool, undo: "UndoStore | None",
                    label: str, root: Path | None = None) -> tuple[int, str | None]:
    """Write-ahead, then act: the pre-image is saved and synced in the undo store before the file is touched.
    If saving fails, UndoError and nothing is written; a failed write leaves no entry. Returns (the file's new
    size, a notice from the store: older undo entries pruned, or that the file WAS written but its undo record
    could not be completed, e.g. on a full disk). With `root`, the file is reached beneath it (see
    `atomic_write`)."""
    if undo is None:
        return atomic_write(path, data, append=append, root=root), None
    with undo.landing(label):  # one writer per workspace (sandbox/workspace_lock.py)
        return _write_recorded(path, data, append=append, undo=undo, label=label, root=root)


def _write_recorded(path: Path, data: bytes, *, append: bool, undo: "UndoStore", label: str,
                    root: Path | None) -> tuple[int, str | None]:
    entry = undo.begin(label, "writeFile")
    try:
        entry.save_preimage(path)
        entry.prepare()  # synced before the workspace is touched; UndoError when it cannot be
    except BaseException:
        entry.discard()
        raise
    try:
        written = atomic_write(path, data, append=append, root=root)
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
