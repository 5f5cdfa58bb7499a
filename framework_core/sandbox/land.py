"""How the entries of an overlay's change set land in the workspace: files by rename from the upper directory.

The upper directory is dropped once its change set is applied, so a new or modified file need not be copied:
it is renamed into place (a replaced file is swapped atomically, the old inode stays in the undo store as its
pre-image). That is a metadata update, where the upper directory is on the workspace's file system (see
`scratch.py`); elsewhere, or where a rename is refused, the file is copied as before. Hard links the command
made stay hard links either way: a renamed inode keeps all its names.

Only data lands. Permission bits do, but never setuid, setgid or sticky (LACA may run as root: a setuid file
made in the sandbox must not become a setuid program of the user's); neither do the owner or the extended
attributes the command gave a file (ACLs, file capabilities, the overlay's own): a renamed file is made to look
like a copied one first. FIFOs, sockets and device files are refused and said, never re-created. Every walk is
iterative, so a tree 1,200 folders deep lands and goes like a flat one.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from framework_core.sandbox.nodes import remove_tree

SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX
KEPT_XATTRS = ("security.selinux",)  # the file system's label, not something the command chose
RENAME = True  # False: copy every file, as before (benchmarks/bench_overlay.py measures the difference)


class ChangeLike(Protocol):
    @property
    def rel_path(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def node(self) -> str: ...


@dataclass
class Landing:
    """What happened to each change, in order."""

    landed: list[int] = field(default_factory=list)  # indices of the changes applied
    refused: dict[int, str] = field(default_factory=dict)  # index -> what it is ("a FIFO", "a socket", …)
    stripped: list[str] = field(default_factory=list)  # paths that landed without their setuid/setgid/sticky bits
    error: str | None = None


class Applier:
    """Applies changes in order (parents before children); folder modes and mtimes last."""

    def __init__(self, upper: str, workspace: str, keep: frozenset[str], links: dict[int, str],
                 fresh: set[str]) -> None:
        self.upper, self.ws, self.keep, self.fresh = upper, workspace, keep, fresh
        self.inodes = {ino: os.path.join(workspace, rel) for ino, rel in links.items()}
        self.dirs: list[tuple[str, os.stat_result, bool]] = []
        self.rename = RENAME and _same_device(upper, workspace)
        self.uid, self.gid = os.geteuid(), os.getegid()
        self.out = Landing()

    def run(self, changes: Sequence[ChangeLike]) -> Landing:
        for i, c in enumerate(changes):
            try:
                refused = self._one(c)
            except OSError as exc:
                self.out.error = f"{c.rel_path}: {exc.strerror or exc}"
                break
            if refused:
                self.out.refused[i] = refused
            else:
                self.out.landed.append(i)
        for target, st, times in reversed(self.dirs):
            try:
                os.chmod(target, stat.S_IMODE(st.st_mode) & ~SPECIAL_BITS)
                if times:
                    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
            except OSError as exc:
                self.out.error = self.out.error or f"{target}: {exc.strerror or exc}"
        return self.out

    def _one(self, c: ChangeLike) -> str | None:
        """Apply one change; what it is when it is refused (a FIFO, a socket or a device)."""
        src, target = os.path.join(self.upper, c.rel_path), os.path.join(self.ws, c.rel_path)
        if c.kind == "deleted":
            remove_tree(target, self.keep)
            return None
        st = os.lstat(src)
        what = refused_kind(st.st_mode)
        if what is not None:
            return what
        if stat.S_IMODE(st.st_mode) & SPECIAL_BITS:
            self.out.stripped.append(c.rel_path)
        if stat.S_ISDIR(st.st_mode):
            if c.kind != "mode_changed":
                remove_tree(target, self.keep)
                if not os.path.isdir(target):  # a protected path inside may have kept it
                    os.mkdir(target, 0o700)
            self.dirs.append((target, st, c.kind != "mode_changed"))
            return None
        fresh = os.path.dirname(c.rel_path) in self.fresh
        if stat.S_ISREG(st.st_mode) and not (st.st_nlink > 1 and st.st_ino in self.inodes) and self._renamed(
                src, target, st, fresh):
            return None
        tmp = target if fresh else os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.laca-apply")
        if tmp != target and os.path.lexists(tmp):
            os.unlink(tmp)  # left by an apply that was interrupted
        self._make(src, tmp, st, c.rel_path)
        if tmp != target:
            if os.path.isdir(target) and not os.path.islink(target):
                remove_tree(target, self.keep)
            os.replace(tmp, target)
        return None

    def _renamed(self, src: str, target: str, st: os.stat_result, fresh: bool) -> bool:
        """Move the upper file `src` to `target` (replacing what is there); False: copy it instead."""
        if not self.rename or not self._as_copied(src, st):
            return False
        if not fresh and os.path.isdir(target) and not os.path.islink(target):
            remove_tree(target, self.keep)
        try:
            os.rename(src, target)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EACCES):
                raise
            if exc.errno == errno.EXDEV:  # another file system (a mount inside the workspace): copy from now on
                self.rename = False
            return False
        return True

    def _as_copied(self, src: str, st: os.stat_result) -> bool:
        """Give the upper file what a copy would have: LACA's owner, no special bits, no extended attributes."""
        try:
            chown = st.st_uid != self.uid or st.st_gid != self.gid
            if chown:
                os.lchown(src, self.uid, self.gid)
            mode = stat.S_IMODE(st.st_mode)
            if mode & SPECIAL_BITS or chown:  # a chown may drop some bits, not necessarily all
                os.chmod(src, mode & ~SPECIAL_BITS)
            for name in os.listxattr(src, follow_symlinks=False):
                if name not in KEPT_XATTRS:
                    os.removexattr(src, name, follow_symlinks=False)
        except OSError:
            return False
        return True

    def _make(self, src: str, dst: str, st: os.stat_result, rel: str) -> None:
        """Create `dst` as a copy of the upper entry `src` (mode and times kept, special bits not)."""
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(src), dst)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
        elif st.st_nlink > 1 and st.st_ino in self.inodes:
            os.link(self.inodes[st.st_ino], dst)  # a hard link made by the command stays a hard link
        else:
            copy_file(src, dst, st)
            if st.st_nlink > 1:
                self.inodes[st.st_ino] = os.path.join(self.ws, rel)


def refused_kind(mode: int) -> str | None:
    """What a node that never lands is, in words; None for a file, folder or symlink."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device file"


def _same_device(upper: str, workspace: str) -> bool:
    try:
        return os.stat(upper).st_dev == os.stat(workspace).st_dev
    except OSError:
        return False


def copy_file(src: str, dst: str, st: os.stat_result) -> None:
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            if st.st_size <= 1 << 16:
                data = memoryview(os.read(fin, st.st_size + 1))
                while data:
                    data = data[os.write(fd, data):]
            else:
                offset = 0
                while offset < st.st_size:
                    sent = os.sendfile(fd, fin, offset, st.st_size - offset)
                    if sent == 0:
                        break
                    offset += sent
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~SPECIAL_BITS)
            os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(fd)
    finally:
        os.close(fin)
