"""Where a command's full output goes when it is too long for the model, and how much disk that may take.

The model gets the head and tail of a long output; the whole of it is saved in the session's own folder
(`<data>/sessions/<id>.output/`), never in the shared /tmp. Each command may print at most `max_bytes`
(past that it is stopped: an endless producer such as `yes` is ended by this cap, not by a full disk),
and a session saves at most `session_budget` bytes in all. The folder is removed when the session ends,
and folders left by sessions that were killed are removed at the next start once they are old enough.
"""

from __future__ import annotations

import atexit
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MAX_BYTES = 50_000_000
DEFAULT_SESSION_BUDGET = 500_000_000
STALE_AFTER_S = 24 * 3600
SUFFIX = ".output"


class SessionBudget:
    """Bytes of saved output left for the session; shared by every command, thread-safe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            return True


@dataclass
class OutputLimits:
    """What one command's output may cost. `spill_dir` None: the full output is not saved anywhere."""

    spill_dir: Path | None
    max_bytes: int = DEFAULT_MAX_BYTES
    budget: SessionBudget = field(default_factory=lambda: SessionBudget(DEFAULT_SESSION_BUDGET))


_default: OutputLimits | None = None
_default_lock = threading.Lock()


def session_spill_dir(transcript: Path) -> Path:
    return transcript.with_suffix(SUFFIX)


def configure(spill_dir: Path | None, *, max_bytes: int = DEFAULT_MAX_BYTES,
              session_budget: int = DEFAULT_SESSION_BUDGET) -> OutputLimits:
    """Set the limits every command of this process uses unless given others; the folder goes at exit."""
    global _default
    limits = OutputLimits(spill_dir, max_bytes, SessionBudget(session_budget))
    with _default_lock:
        _default = limits
    if spill_dir is not None:
        atexit.register(remove_dir, spill_dir)
    return limits


def default_limits() -> OutputLimits:
    """The configured limits; before any session configured them, a folder of this process's own."""
    global _default
    with _default_lock:
        if _default is None:
            from framework_core.config.dirs import user_data_dir

            folder = user_data_dir() / "output" / f"pid-{os.getpid()}{SUFFIX}"
            _default = OutputLimits(folder)
            atexit.register(remove_dir, folder)
        return _default


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _in_use(folder: Path) -> bool:
    """Whether a live LACA still owns this output folder (its transcript is locked, or its pid runs)."""
    import fcntl

    name = folder.name[: -len(SUFFIX)]
    if name.startswith("pid-"):
        try:
            os.kill(int(name[4:]), 0)
            return True
        except (ValueError, ProcessLookupError):
            return False
        except PermissionError:
            return True
    transcript = folder.with_name(name + ".jsonl")
    try:
        fd = os.open(transcript, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def remove_stale(data_dir: Path, max_age_s: float = STALE_AFTER_S) -> int:
    """Remove output folders of sessions that ended without cleaning up (killed), once they are old enough
    and no running LACA owns them. Returns how many were removed; never raises."""
    removed = 0
    now = time.time()
    for parent in (data_dir / "sessions", data_dir / "output"):
        try:
            folders = [p for p in parent.glob("*" + SUFFIX) if p.is_dir()]
        except OSError:
            continue
        for folder in folders:
            try:
                old = now - folder.stat().st_mtime > max_age_s
            except OSError:
                continue
            if old and not _in_use(folder):
                remove_dir(folder)
                removed += 1
    return removed
