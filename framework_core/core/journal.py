"""The transcript file: an append-only JSONL journal with one writer.

Each record is one line written by a single `write(2)` on an O_APPEND descriptor, so a `kill -9` can cut
at most the line being written. A line left unterminated (a kill, a full disk) is terminated before the
next record, so the next record is never glued onto it. The writer holds an advisory lock (`flock`) on
the transcript for as long as it is open; a second LACA that tries to write the same session is refused
and told which process holds it. The lock goes away with the process, however it ends.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from framework_core.errors import ConfigError


class SessionBusy(ConfigError):
    """Another LACA process is writing this session."""

    def __init__(self, session_id: str, pid: int | None, path: Path) -> None:
        holder = f"LACA process {pid}" if pid else "another LACA process"
        super().__init__(f"session {session_id} is open in {holder}. Two writers would interleave its transcript. "
                         "Close the other one, or fork: start a new session from this one's history (--fork-session).")
        self.session_id, self.pid, self.path = session_id, pid, str(path)


def holder_pid(path: Path) -> int | None:
    """The pid recorded by the process holding the transcript's lock, if it wrote one."""
    try:
        return int(lock_info_path(path).read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def lock_info_path(path: Path) -> Path:
    return path.with_suffix(".lock")


class Transcript:
    """Append-only JSONL writer. Secrets never reach it: values of known secret keys are masked.

    `open()` creates the file and takes the lock (raising SessionBusy or OSError); `write()` raises OSError
    when the disk refuses the record, and the caller decides what to do (see MessageManager).
    """

    def __init__(self, path: Path, secrets_to_mask: tuple[str, ...] = (), *, session_id: str | None = None) -> None:
        self.path = path
        self.session_id = session_id or path.stem
        self._fd: int | None = None
        self._mask = tuple(s for s in secrets_to_mask if s and len(s) >= 8)
        self._unterminated = False

    def open(self) -> None:
        import fcntl

        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(self.session_id, holder_pid(self.path), self.path) from None
        except OSError:
            pass  # a filesystem without locks: write anyway, as before
        size = os.fstat(fd).st_size
        self._unterminated = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        self._fd = fd
        try:
            lock_info_path(self.path).write_text(f"{os.getpid()} {time.time():.0f}\n", encoding="utf-8")
        except OSError:
            pass  # informational only: the lock itself is on the transcript

    def encode(self, record: dict[str, Any]) -> bytes:
        line = json.dumps({"ts": round(time.time(), 3), **record}, ensure_ascii=False, default=str)
        for secret in self._mask:
            line = line.replace(secret, "***")
        return (line + "\n").encode("utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self.write_bytes(self.encode(record))

    def write_bytes(self, data: bytes) -> None:
        """Append one encoded record. Raises OSError (ENOSPC, EIO, EROFS …) with nothing half-accounted."""
        if self._fd is None:
            self.open()
        assert self._fd is not None
        if self._unterminated:
            data = b"\n" + data
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._fd, view)
            except OSError:
                if len(view) < len(data):
                    self._unterminated = True  # part of this line reached the file
                raise
            view = view[n:]
        self._unterminated = False

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            lock_info_path(self.path).unlink(missing_ok=True)
        except OSError:
            pass
        os.close(fd)  # releases the lock
