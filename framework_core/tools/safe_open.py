"""Open a path beneath the workspace without following a symlink out of it, and never block on a FIFO.

The file tools check a path and then use it; a command running meanwhile could swap a folder or the file
for a symlink to a secret elsewhere. So nothing here looks a path up twice: the file (or the folder a write
goes into) is opened relative to a descriptor of the workspace, by `openat2(RESOLVE_BENEATH |
RESOLVE_NO_MAGICLINKS)` where the kernel has it (Linux 5.6+), else one component at a time with `O_NOFOLLOW`.
A symlink met on the way is followed only while it stays inside the workspace; one leading out is refused.
What is read or written afterwards goes through the descriptor. Files are opened with `O_NONBLOCK`, checked
with `fstat`, and anything but a regular file (a FIFO, a device, a socket) is refused at once.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import stat
from collections import deque
from pathlib import Path
from typing import Any

SYS_OPENAT2 = 437  # the same number on x86_64 and aarch64 (the generic syscall table)
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
MAX_LINKS = 40  # as the kernel's own limit on symlinks in one lookup


class OutsideWorkspace(OSError):
    """The path leads out of the workspace (through `..` or a symlink)."""

    def __init__(self, shown: str) -> None:
        super().__init__(errno.EXDEV, f"{shown} leads outside the workspace (through a symlink or '..')")


class NotRegular(OSError):
    """A FIFO, device, socket or folder where a regular file was wanted."""

    def __init__(self, shown: str, what: str) -> None:
        super().__init__(errno.EINVAL, f"{shown} is {what}, not a regular file")
        self.what = what


_openat2_state: list[bool] = []  # [False] once the kernel said ENOSYS: not tried again


@functools.cache
def _syscall() -> tuple[Any, Any]:
    """(libc's syscall function, the `struct open_how` type), made on first use."""
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

    return ctypes.CDLL(None, use_errno=True).syscall, OpenHow


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """The descriptor, or None when this kernel (or a seccomp filter) has no openat2."""
    if _openat2_state and not _openat2_state[0]:
        return None
    import ctypes

    syscall, open_how = _syscall()
    how = open_how(flags, mode if flags & os.O_CREAT else 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
    fd = syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(os.fsencode(rel)),
                      ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        _openat2_state[:] = [True]
        return int(fd)
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and not _openat2_state:
        _openat2_state[:] = [False]  # no openat2 here (EPERM: a container's seccomp profile refuses it)
        return None
    if err == errno.EXDEV:
        raise OutsideWorkspace(rel)
    raise OSError(err, os.strerror(err), rel)


def _walk(root_fd: int, root_real: str, rel: str, flags: int, mode: int, *, make_dirs: bool = False) -> int:
    """Component by component from `root_fd`, each opened with O_NOFOLLOW; a symlink is resolved here, only
    while it stays beneath the root (an absolute one that names a place beneath `root_real` too). With
    `make_dirs`, missing folders on the way are created."""
    todo = deque(p for p in rel.split("/") if p not in ("", "."))
    stack = [os.dup(root_fd)]
    links = 0
    try:
        while todo:
            name = todo.popleft()
            if name == "..":
                if len(stack) == 1:
                    raise OutsideWorkspace(rel)
                os.close(stack.pop())
                continue
            last = not todo
            want = (flags | os.O_NOFOLLOW) if last else (os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            try:
                fd = os.open(name, want | os.O_CLOEXEC, mode, dir_fd=stack[-1])
            except OSError as exc:
                target = _link_target(name, stack[-1], exc)
                if target is None:
                    if make_dirs and exc.errno == errno.ENOENT and (not last or flags & os.O_DIRECTORY):
                        os.mkdir(name, 0o777, dir_fd=stack[-1])
                        todo.appendleft(name)
                        continue
                    raise
                links += 1
                if target.startswith("/"):
                    inside = _under(os.path.normpath(target), root_real)
                    if inside is None:
                        raise OutsideWorkspace(rel) from None
                    while len(stack) > 1:  # an absolute target is taken from the root again
                        os.close(stack.pop())
                    target = inside
                if links > MAX_LINKS:
                    raise OutsideWorkspace(rel) from None
                todo.extendleft(reversed([p for p in target.split("/") if p not in ("", ".")]))
                continue
            if last:
                return fd
            stack.append(fd)
        return os.dup(stack[-1])  # the path named the root itself (or a folder reached through `..`)
    finally:
        for fd in stack:
            os.close(fd)


def _under(path: str, root: str) -> str | None:
    if path == root:
        return "."
    return path[len(root.rstrip("/")) + 1:] if path.startswith(root.rstrip("/") + "/") else None


def _link_target(name: str, dir_fd: int, exc: OSError) -> str | None:
    """What the symlink `name` points at, when `exc` came from meeting one; None otherwise."""
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return None
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None


def open_beneath(root: Path, rel: str, flags: int, mode: int = 0o666, *, make_dirs: bool = False) -> int:
    """A descriptor for `rel` (relative to `root`), never reached through a symlink leading out of `root`.
    Raises OutsideWorkspace, or the OSError of the open."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        clean = rel.strip("/") or "."
        if not make_dirs:
            try:
                fd = _openat2(root_fd, clean, flags | os.O_CLOEXEC, mode)
            except OutsideWorkspace:
                fd = None  # perhaps an absolute symlink naming a place inside: the walk below decides
            if fd is not None:
                return fd
        return _walk(root_fd, os.path.realpath(root), clean, flags, mode, make_dirs=make_dirs)
    finally:
        os.close(root_fd)


def regular_only(fd: int, shown: str) -> os.stat_result:
    """Refuse anything but a regular file (closing `fd`); clear O_NONBLOCK for a regular one."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegular(shown, kind_of(st.st_mode))
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return st


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def open_for_reading(root: Path | None, rel: str) -> int:
    """A read descriptor of a regular file: beneath `root`, or (root None) at the absolute path `rel` as it
    is, still without blocking on a FIFO."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
    fd = (open_beneath(root, rel, flags) if root is not None
          else os.open(rel, flags | os.O_CLOEXEC))
    regular_only(fd, rel)
    return fd
