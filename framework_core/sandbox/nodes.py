"""What is at a path, as undo and change sets see it, and the tree operations both need: walking a folder,
removing one (keeping some paths), and putting a saved node back."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal

NodeKind = Literal["absent", "file", "dir", "symlink", "fifo", "other"]
_KINDS: dict[int, NodeKind] = {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink",
                               stat.S_IFIFO: "fifo"}


@dataclass(frozen=True)
class NodeState:
    """What is at a path, as far as undo cares: type, permission bits, size, mtime, symlink target."""

    kind: NodeKind
    mode: int = 0
    size: int = 0
    mtime_ns: int = 0
    target: str = ""

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> NodeState:
        try:
            return cls.from_stat(os.lstat(path), path)
        except (FileNotFoundError, NotADirectoryError):
            return ABSENT

    @classmethod
    def from_stat(cls, st: os.stat_result, path: str | os.PathLike[str]) -> NodeState:
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "other")
        target = os.readlink(path) if kind == "symlink" else ""
        return cls(kind, stat.S_IMODE(st.st_mode), st.st_size if kind == "file" else 0, st.st_mtime_ns, target)

    def matches(self, other: NodeState) -> bool:
        """The same as far as a later change would show (a folder's mtime moves with its contents)."""
        if self.kind != other.kind:
            return False
        if self.kind == "symlink":
            return self.target == other.target
        if self.kind == "file":
            return (self.mode, self.size, self.mtime_ns) == (other.mode, other.size, other.mtime_ns)
        return self.kind == "absent" or self.mode == other.mode

    def to_json(self) -> list:
        return [self.kind, self.mode, self.size, self.mtime_ns, self.target]

    @classmethod
    def from_json(cls, data: list) -> NodeState:
        return cls(*data)


ABSENT = NodeState("absent")


def _missing_parents(path: str) -> list[str]:
    """The folders above `path` that do not exist yet, outermost first."""
    out: list[str] = []
    parent = os.path.dirname(path)
    while parent and parent != os.path.dirname(parent) and not os.path.lexists(parent):
        out.append(parent)
        parent = os.path.dirname(parent)
    return out[::-1]


def walk_tree(top: str, keep: frozenset[str], kept: list[str]) -> Iterator[tuple[str, str, NodeState, os.stat_result]]:
    """Everything under the folder `top`, parents first, never following symlinks: (relative path, full
    path, state, stat). Paths in `keep` are skipped (and listed in `kept`)."""
    stack = [("", top)]
    while stack:
        rel_dir, full_dir = stack.pop()
        with os.scandir(full_dir) as it:
            items = sorted(it, key=lambda e: e.name, reverse=True)
        for item in reversed(items):
            rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
            if item.path in keep:
                kept.append(item.path)
                continue
            st = item.stat(follow_symlinks=False)
            state = NodeState.from_stat(st, item.path)
            yield rel, item.path, state, st
            if state.kind == "dir":
                stack.append((rel, item.path))


def remove_tree(path: str, keep: frozenset[str] = frozenset()) -> None:
    """Remove a file, symlink or folder (with everything in it, never following symlinks), leaving `keep` paths
    and the folders that lead to them in place. Iterative and one open folder at a time, so a tree of any depth
    goes (no recursion limit, no descriptor per level)."""
    if path in keep:
        return
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    holders: set[str] = set()  # folders that lead to a kept path: they stay
    for k in keep:
        if k.startswith(path + "/"):
            parent = os.path.dirname(k)
            while parent not in holders and len(parent) >= len(path):
                holders.add(parent)
                parent = os.path.dirname(parent)
    stack: list[tuple[str, bool]] = [(path, False)]
    while stack:
        folder, emptied = stack.pop()
        if emptied:
            if folder not in holders:
                os.rmdir(folder)
            continue
        stack.append((folder, True))
        for name in _names(folder):
            full = os.path.join(folder, name)
            if full in keep:
                continue
            if stat.S_ISDIR(os.lstat(full).st_mode):
                stack.append((full, False))
            else:
                os.unlink(full)


def _names(folder: str) -> list[str]:
    """The entries of a folder that must be a real folder (a symlink swapped in is not followed)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def restore_node(path: str, state: NodeState, blob: Path | None,
                 expect: tuple[int, int, int] | None = None) -> None:
    """Create `state` at `path` (which is absent, or a folder kept for a protected path inside it).
    Folders get their final mode and mtime from the caller, after their contents. A file comes from
    `blob`, which must be a regular file (never a symlink) and, given `expect` (device, inode, size), the
    very file that was verified; mode and time are set only on what was created here."""
    if state.kind == "dir":
        if not os.path.isdir(path) or os.path.islink(path):
            os.mkdir(path, 0o700)
    elif state.kind == "file":
        assert blob is not None
        _restore_file(path, state, blob, expect)
    elif state.kind == "symlink":
        os.symlink(state.target, path)
        os.utime(path, ns=(state.mtime_ns, state.mtime_ns), follow_symlinks=False)
    elif state.kind == "fifo":
        os.mkfifo(path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        try:
            os.fchmod(fd, state.mode)
            os.utime(fd, ns=(state.mtime_ns, state.mtime_ns))
        finally:
            os.close(fd)


def _restore_file(path: str, state: NodeState, blob: Path, expect: tuple[int, int, int] | None) -> None:
    src = os.open(blob, os.O_RDONLY | os.O_NOFOLLOW)  # a symlink in the store is refused (ELOOP)
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode) or (expect is not None and (st.st_dev, st.st_ino, st.st_size) != expect):
            raise OSError(f"the saved copy {blob} changed since it was checked")
        dst = -1
        try:
            os.link(blob, path, follow_symlinks=False)  # the entry is removed once reverted: not shared for long
            dst = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            if (os.fstat(dst).st_dev, os.fstat(dst).st_ino) != (st.st_dev, st.st_ino):  # swapped meanwhile
                os.close(dst)
                dst = -1
                os.unlink(path)
                raise OSError("the saved copy was replaced while it was linked")
        except OSError:
            if dst == -1:
                dst = _copy_fd(src, path)
        try:
            os.fchmod(dst, state.mode)
            os.utime(dst, ns=(state.mtime_ns, state.mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _copy_fd(src: int, path: str) -> int:
    """Copy the open file `src` to a new file at `path` (never through a symlink); returns its descriptor."""
    dst = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.lseek(src, 0, os.SEEK_SET)
        while chunk := os.read(src, 1 << 20):
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view):]
    except BaseException:
        os.close(dst)
        raise
    return dst
