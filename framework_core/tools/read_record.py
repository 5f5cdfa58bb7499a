"""What the model has read in this session, for the edit tools' stale check.

`readFile` notes each file it returns (its resolved path and the sha256 of its bytes); `editFile`, `applyPatch`
and `writeFile` note what they leave behind, since the model knows that text. An edit of a file the model never
read in this session is refused, and so is one of a file whose bytes changed since (the user's editor, a
command, another session): the model would be replacing text it has not seen. One record per session, held by
the session's `ToolContext` (framework_core/tools/base.py).
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Seen:
    digest: str  # sha256 of the file's bytes when the model saw them
    at: float  # when (time.time())
    how: str  # "read" or the tool that wrote it


class ReadRecord:
    """Path (resolved, absolute) → what the model last saw of it. Thread-safe."""

    def __init__(self) -> None:
        self._seen: dict[str, Seen] = {}
        self._lock = threading.Lock()

    def saw(self, path: str, data: bytes | str, how: str = "read") -> None:
        """The model has seen these bytes of `path` (given the bytes, or their sha256 as hex)."""
        digest = data if isinstance(data, str) else hashlib.sha256(data).hexdigest()
        with self._lock:
            self._seen[path] = Seen(digest, time.time(), how)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()

    def forget(self, path: str) -> None:
        with self._lock:
            self._seen.pop(path, None)

    def get(self, path: str) -> Seen | None:
        with self._lock:
            return self._seen.get(path)

    def stale(self, path: str, digest: str, shown: str) -> str | None:
        """Why an edit of `path`, whose bytes now have `digest`, may not go ahead; None when it may."""
        seen = self.get(path)
        if seen is None:
            return (f"{shown} has not been read in this session; read it with readFile first, so the edit "
                    "replaces text you have seen")
        if seen.digest != digest:
            when = time.strftime("%H:%M:%S", time.localtime(seen.at))
            return (f"{shown} changed on disk since you last saw it (at {when}, by {seen.how}); its new contents "
                    "were kept. Read it again with readFile, then make the edit against what it holds now")
        return None
