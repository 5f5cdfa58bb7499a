"""MessageManager: the conversation, always valid for the provider, mirrored to an append-only JSONL transcript.

Transcripts live in the XDG data dir (`sessions/<id>.jsonl`), one record per line, flushed as written, so a
`kill -9` loses at most the reply in flight. Records: meta, message, approval, usage, clear, replace.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, IO

from framework_core.history import repair
from framework_core.lial_core import Message, ToolResult, Usage

_SECRET_HINTS = ("api_key", "apikey", "authorization", "x-api-key")


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


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


@dataclass
class LoadedSession:
    meta: dict[str, Any]
    messages: list[Message]
    usage: Usage
    warnings: list[str] = field(default_factory=list)


class Transcript:
    """Append-only JSONL writer. Secrets never reach it: values of known secret keys are masked."""

    def __init__(self, path: Path, secrets_to_mask: tuple[str, ...] = ()) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = None
        self._mask = tuple(s for s in secrets_to_mask if s and len(s) >= 8)

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is None:
            self._fh = open(self.path, "a", encoding="utf-8")
        line = json.dumps({"ts": round(time.time(), 3), **record}, ensure_ascii=False, default=str)
        for secret in self._mask:
            line = line.replace(secret, "***")
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def load_transcript(path: Path) -> LoadedSession:
    """Rebuild a session. Corrupt or truncated lines are skipped with a warning, never fatal."""
    meta: dict[str, Any] = {}
    messages: list[Message] = []
    usage = Usage()
    warnings: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                kind = rec.get("type")
                if kind == "meta":
                    meta.update({k: v for k, v in rec.items() if k not in ("type", "ts")})
                elif kind == "message":
                    messages.append(Message.from_dict(rec["message"]))
                elif kind == "clear":
                    messages = []
                elif kind == "replace":
                    messages = [Message.from_dict(m) for m in rec["messages"]]
                elif kind == "usage":
                    usage = usage + Usage(**{k: int(v) for k, v in rec.get("usage", {}).items()})
            except (ValueError, KeyError, TypeError) as exc:
                warnings.append(f"{path.name} line {n}: skipped an unreadable record ({type(exc).__name__})")
    messages, fixes = repair(messages)
    warnings += [f"repaired history: {f}" for f in fixes]
    return LoadedSession(meta, messages, usage, warnings)


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


def _peek(path: Path) -> SessionInfo | None:
    ws, preview, count = "", "", 0
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if '"type": "meta"' in line and not ws:
                    try:
                        ws = json.loads(line).get("workspace", "")
                    except ValueError:
                        pass
                elif '"type": "message"' in line:
                    count += 1
                    if not preview and '"role": "user"' in line:
                        try:
                            preview = json.loads(line)["message"]["content"][:60].replace("\n", " ")
                        except (ValueError, KeyError, TypeError):
                            pass
        return SessionInfo(path.stem, path, ws, path.stat().st_mtime, count, preview)
    except OSError:
        return None


class MessageManager:
    """The conversation history plus its transcript and token accounting."""

    def __init__(self, transcript: Transcript | None = None, session_id: str | None = None) -> None:
        self.session_id = session_id or new_session_id()
        self.transcript = transcript
        self.messages: list[Message] = []
        self.usage = Usage()
        self.last_usage = Usage()

    # -- building ---------------------------------------------------------------------------
    def start(self, meta: dict[str, Any]) -> None:
        self._record({"type": "meta", "session_id": self.session_id, **meta})

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self._record({"type": "message", "message": message.to_dict()})

    def add_user(self, text: str) -> None:
        self.add(Message("user", text))

    def add_results(self, results: list[ToolResult]) -> None:
        for result in results:
            self.add(Message.tool_result(result))

    def record_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.last_usage = usage
        self._record({"type": "usage", "usage": usage.__dict__})

    def record(self, record: dict[str, Any]) -> None:
        """An audit record (approval decisions and the like)."""
        self._record(record)

    def clear(self) -> None:
        self.messages = []
        self._record({"type": "clear"})

    def replace(self, messages: list[Message], reason: str) -> None:
        self.messages = list(messages)
        self._record({"type": "replace", "reason": reason, "messages": [m.to_dict() for m in messages]})

    def restore(self, loaded: LoadedSession) -> None:
        self.messages = list(loaded.messages)
        self.usage = loaded.usage

    # -- validity ---------------------------------------------------------------------------
    def repair(self) -> list[str]:
        """Make the history valid (every call answered); record the fix in the transcript."""
        fixed, fixes = repair(self.messages)
        if fixes:
            self.replace(fixed, "repair: " + "; ".join(fixes))
        return fixes

    def _record(self, record: dict[str, Any]) -> None:
        if self.transcript is not None:
            try:
                self.transcript.write(record)
            except OSError:
                self.transcript = None  # disk trouble must not end the session; the UI warns via core


def open_session(data_dir: Path, session_id: str | None = None, secrets_to_mask: tuple[str, ...] = ()) -> MessageManager:
    sid = session_id or new_session_id()
    path = sessions_dir(data_dir) / f"{sid}.jsonl"
    return MessageManager(Transcript(path, secrets_to_mask), sid)


def find_session(data_dir: Path, session_id: str) -> Path | None:
    folder = sessions_dir(data_dir)
    exact = folder / f"{session_id}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(folder.glob(f"{session_id}*.jsonl")) if folder.is_dir() else []
    return matches[0] if len(matches) == 1 else None


def secrets_in_env(env_vars: list[str]) -> tuple[str, ...]:
    return tuple(os.environ[v] for v in env_vars if os.environ.get(v))
