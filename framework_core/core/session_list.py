"""The saved sessions of the data folder, as a list: which there are, the newest of a workspace, and transcripts
too damaged to be a session (named, never passed over in silence). Read only as much of each file as needed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from framework_core.config.json_store import loads_bounded

MAX_RECORD_DEPTH = 200  # a line nested deeper is a damaged record (skipped and said), never a RecursionError


def _loads(line: str) -> Any:
    return loads_bounded(line, max_depth=MAX_RECORD_DEPTH)


def sessions_dir(data_dir: Path) -> Path:
    return data_dir / "sessions"


@dataclass
class SessionInfo:
    session_id: str
    path: Path
    workspace: str
    updated: float
    messages: int
    preview: str


def list_sessions(data_dir: Path, workspace: Path | None = None) -> list[SessionInfo]:
    """Sessions with at least one message, newest first; only this workspace's when `workspace` is given."""
    out: list[SessionInfo] = []
    folder = sessions_dir(data_dir)
    if not folder.is_dir():
        return out
    for path in folder.glob("*.jsonl"):
        info = _peek(path)
        if info and info.messages and (workspace is None or info.workspace == str(workspace)):
            out.append(info)
    return sorted(out, key=lambda s: s.updated, reverse=True)


def latest_session(data_dir: Path, workspace: Path) -> Path | None:
    """The newest session of this workspace with a message, reading only as much of each file as needed."""
    folder = sessions_dir(data_dir)
    if not folder.is_dir():
        return None
    paths = []
    for path in folder.glob("*.jsonl"):
        try:
            paths.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(paths, reverse=True):
        ws, has_message = _head(path)
        if has_message and ws == str(workspace):
            return path
    return None


def damaged_transcripts(data_dir: Path) -> list[Path]:
    """Transcripts whose beginning is not a JSON record (binary junk, an overwritten file), newest first: they can
    belong to no workspace LACA can tell, so they are named rather than passed over in silence."""
    out: list[tuple[float, Path]] = []
    folder = sessions_dir(data_dir)
    if not folder.is_dir():
        return []
    for path in folder.glob("*.jsonl"):
        try:
            with open(path, "rb") as fh:
                first = fh.readline(1 << 16)
            when = path.stat().st_mtime
        except OSError:
            continue
        try:
            ok = isinstance(_loads(first.decode("utf-8")), dict)
        except (ValueError, UnicodeDecodeError):
            ok = False
        if first.strip() and not ok:
            out.append((when, path))
    return [p for _, p in sorted(out, reverse=True)]


def _workspace(line: str) -> str:
    """The workspace a transcript's meta record names ('' when the line cannot be read)."""
    try:
        return str(_loads(line).get("workspace", ""))
    except (ValueError, AttributeError):
        return ""


def _head(path: Path) -> tuple[str, bool]:
    ws = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"type": "meta"' in line and not ws:
                    ws = _workspace(line)
                elif '"type": "message"' in line or '"type": "replace"' in line:
                    return ws, True
    except OSError:
        pass
    return ws, False


def _peek(path: Path) -> SessionInfo | None:
    ws, preview, count = "", "", 0
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"type": "meta"' in line and not ws:
                    ws = _workspace(line)
                elif '"type": "message"' in line:
                    count += 1
                    if not preview and '"role": "user"' in line:
                        try:
                            preview = _loads(line)["message"]["content"][:60].replace("\n", " ")
                        except (ValueError, KeyError, TypeError, AttributeError):
                            pass
        return SessionInfo(path.stem, path, ws, path.stat().st_mtime, count, preview)
    except OSError:
        return None
