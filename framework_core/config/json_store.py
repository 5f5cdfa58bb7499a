"""One JSON file LACA rewrites (the trust store, an MCP server's sign-in): read, checked, and written safely.

- One writer at a time: every write, and every read-modify-write (`update`), holds an exclusive `flock` on a
  sibling `<name>.lock` file, so two LACA processes never lose each other's changes.
- Atomic replace: the new text goes to a temporary file in the same folder, is synced, and renamed over the
  old one; a crash leaves the old file or the new one, never half of either.
- Checked before it is believed: the file is parsed with bounded size and depth (a deeply nested file is a
  damaged file, not a `RecursionError`) and its shape is checked by the store's `check` function.
- A damaged file is quarantined (renamed `<name>.damaged-<timestamp>`, kept for the user), and said once,
  naming the file and what is lost; it is never silently replaced. What was said is collected for the
  start-up notes (`take_reports`).
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 32

_REPORTS: list[str] = []  # quarantines said in this process, not yet shown (see take_reports)


class DamagedFile(ValueError):
    """A store file that cannot be believed: unreadable JSON, too deep, too large or the wrong shape."""


def take_reports() -> list[str]:
    """What stores quarantined in this process since the last call (for the start-up notes)."""
    out = list(_REPORTS)
    _REPORTS.clear()
    return out


def report(message: str) -> None:
    """Say a store problem with the start-up notes (a store that cannot be read or written at all)."""
    if message not in _REPORTS:
        _REPORTS.append(message)


def unreadable_why(exc: OSError) -> str:
    """What an OSError on a store file means, in words."""
    import errno

    if exc.errno == errno.EISDIR:
        return "it is a folder, not a file"
    if exc.errno == errno.ELOOP:
        return "it is a symlink loop, or a symlink LACA does not follow"
    return exc.strerror or str(exc)


def depth_of(value: Any) -> int:
    """How deeply lists and objects nest in a parsed value (iteratively: no recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def loads_bounded(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` that raises DamagedFile (never RecursionError) for text nested deeper than `max_depth`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise DamagedFile(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise DamagedFile(f"not valid JSON ({exc})") from None
    if depth_of(value) > max_depth:
        raise DamagedFile(f"nested deeper than {max_depth} levels")
    return value


@contextmanager
def file_lock(path: Path, lock: Path | None = None) -> Iterator[None]:
    """An exclusive `flock` on `lock` (by default `<path>.lock`, beside it) for the block (a file system without
    locks: no lock, as before)."""
    import fcntl

    lock = lock or path.with_name(path.name + ".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # never through a symlink: what it points at is left alone
            raise OSError(errno.ELOOP, f"its lock {lock} is a symlink, which LACA does not follow") from None
        yield  # a read-only data folder: nothing can be written there anyway, and reading needs no lock
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def write_atomic(path: Path, text: str, *, mode: int = 0o600) -> None:
    """Write `text` to `path` through a synced temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass  # the rename is done; a folder that cannot be synced is still consistent


class JsonStore:
    """One JSON file with a checked shape.

    `check(data)` returns the data to use or raises ValueError/TypeError (a DamagedFile) naming what is wrong;
    `empty()` is what a missing or quarantined file reads as; `lost(data_or_None)` says, for the user, what a
    quarantine loses ("the trust of 3 workspaces: LACA asks about them again"); `lock`, the lock file when
    it is not `<name>.lock` beside the file (one lock for a folder of files).
    """

    def __init__(self, path: Path, *, what: str, check: Callable[[Any], Any], empty: Callable[[], Any],
                 lost: Callable[[Any], str], max_depth: int = MAX_DEPTH, mode: int = 0o600,
                 lock: Path | None = None) -> None:
        self.path = path
        self.lock = lock
        self.what = what
        self.check = check
        self.empty = empty
        self.lost = lost
        self.max_depth = max_depth
        self.mode = mode
        self.problems: list[str] = []  # quarantines this object made, said to the user

    def read(self) -> Any:
        """The checked data; a missing file is `empty()`; a damaged one is quarantined and reads as `empty()`.
        Raises OSError only when the file exists and cannot be read (permissions, I/O)."""
        try:
            return self._parse(self._raw())
        except FileNotFoundError:
            return self.empty()
        except DamagedFile:
            with file_lock(self.path, self.lock):  # quarantine only what is still damaged (a writer may have
                return self._read_locked()  # replaced it meanwhile)

    @contextmanager
    def update(self) -> Iterator[Any]:
        """Read-modify-write under the lock: the block changes the data it is given; it is written when the
        block ends without an exception."""
        with file_lock(self.path, self.lock):
            data = self._read_locked()
            yield data
            write_atomic(self.path, json.dumps(data, indent=1, sort_keys=True), mode=self.mode)

    def write(self, data: Any) -> None:
        """Replace the whole file (under the lock)."""
        with file_lock(self.path, self.lock):
            write_atomic(self.path, json.dumps(data, indent=1, sort_keys=True), mode=self.mode)

    # ---- inside ------------------------------------------------------------------------------------
    def _raw(self) -> bytes:
        with open(self.path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise DamagedFile(f"larger than {MAX_BYTES // (1024 * 1024)} MB")
        return raw

    def _parse(self, raw: bytes) -> Any:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DamagedFile("not UTF-8 text") from None
        data = loads_bounded(text, max_depth=self.max_depth)
        try:
            return self.check(data)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise DamagedFile(f"not the shape LACA writes ({exc})") from None

    def _read_locked(self) -> Any:
        try:
            raw = self._raw()
        except FileNotFoundError:
            return self.empty()
        except DamagedFile as exc:
            self._quarantine(str(exc), None)
            return self.empty()
        try:
            return self._parse(raw)
        except DamagedFile as exc:
            self._quarantine(str(exc), _loose(raw))
            return self.empty()

    def _quarantine(self, why: str, loose: Any) -> None:
        moved = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        try:
            os.replace(self.path, moved)
            where = f"moved it to {moved} (kept for you to inspect)"
        except OSError as exc:
            where = f"could not move it aside ({exc.strerror or exc}); it is left as it is and not used"
        try:
            lost = self.lost(loose)
        except Exception:  # a description of a damaged file must not fail in turn
            lost = "what it recorded"
        message = f"The {self.what} {self.path} is damaged ({why}): {where}. Lost: {lost}."
        self.problems.append(message)
        _REPORTS.append(message)


def _loose(raw: bytes) -> Any:
    """The parsed data of a file whose shape is wrong (for saying what is lost), or None."""
    try:
        return loads_bounded(raw.decode("utf-8", errors="replace"))
    except DamagedFile:
        return None
