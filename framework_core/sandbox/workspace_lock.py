"""One writer per workspace: the lock every change LACA lands in a workspace is made under.

A change set's conflict check, its landing and its undo record, a `writeFile`, and `/undo` each hold this lock,
so two LACA sessions in one workspace never land at the same time: the second one waits (a bounded time, and
says that it waits), then judges its change set against the workspace as the first one left it, or gives up
with a clear message. The lock is an exclusive `flock` on a file in LACA's state folder
(`locks/<digest of the workspace path>.lock`, never inside the workspace, hidden from commands), opened without
following a symlink; it is held across processes, and within one process by one thread at a time (re-entrant
for that thread). It goes away with the process, however it ends.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

LOCKS_DIR = "locks"
WAIT_S = 120.0  # how long a second session waits for the first to finish landing
POLL_S = 0.05
WAITING = "waiting for another LACA session landing changes in this workspace…"


class WorkspaceBusy(OSError):
    """The lock was not had within the wait, or cannot be taken at all; the message says which and what to do."""


def lock_path(state_dir: Path, workspace: Path) -> Path:
    digest = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:16]
    return state_dir / LOCKS_DIR / f"{digest}.lock"


class WorkspaceLock:
    """The lock of one workspace. `hold()` is a context manager; `on_wait` is told once per wait that it waits
    (TEPS says it on screen)."""

    def __init__(self, path: Path, *, wait_s: float = WAIT_S) -> None:
        self.path = Path(path)
        self.wait_s = wait_s
        self.on_wait: Callable[[str], None] = lambda message: None
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @classmethod
    def for_workspace(cls, workspace: Path, *, wait_s: float = WAIT_S) -> WorkspaceLock:
        from framework_core.config.dirs import user_state_dir

        return cls(lock_path(user_state_dir(), workspace), wait_s=wait_s)

    @contextmanager
    def hold(self, what: str = "") -> Iterator[None]:
        """Hold the lock for the block; WorkspaceBusy when another session keeps it longer than the wait."""
        deadline = time.monotonic() + self.wait_s
        if not self._thread_lock.acquire(timeout=self.wait_s):
            raise WorkspaceBusy(errno.EBUSY, self._busy(None))
        try:
            if self._depth == 0:
                self._fd = self._take(deadline, what)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    os.close(fd)  # releases the flock
        finally:
            self._thread_lock.release()

    def _take(self, deadline: float, what: str) -> int:
        import fcntl

        fd = self._open()
        said = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise WorkspaceBusy(errno.EBUSY, self._busy(_holder(fd))) from None
                    if not said:
                        said = True
                        self.on_wait(WAITING)
                    time.sleep(POLL_S)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {what[:200]}\n".encode("utf-8", "replace"), 0)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            why = ("it is a symlink, which LACA does not follow" if exc.errno == errno.ELOOP
                   else exc.strerror or str(exc))
            raise WorkspaceBusy(exc.errno or errno.EIO,
                                f"cannot take the workspace's lock {self.path} ({why}); nothing was changed. "
                                "Remove what is in its place and try again.") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise WorkspaceBusy(errno.EINVAL, f"cannot take the workspace's lock {self.path}: it is not a regular "
                                              "file; nothing was changed. Remove it and try again.")
        return fd

    def _busy(self, holder: str | None) -> str:
        who = f"LACA process {holder}" if holder else "another LACA session"
        return (f"{who} has been landing changes in this workspace for more than {self.wait_s:.0f} s; nothing of "
                "this change was applied (one session lands at a time). Try again when it has finished.")


def _holder(fd: int) -> str | None:
    """The pid the holder wrote into the lock file (informational)."""
    try:
        words = os.pread(fd, 256, 0).decode("utf-8", "replace").split()
    except OSError:
        return None
    return words[0] if words and words[0].isdigit() else None
