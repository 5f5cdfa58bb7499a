"""MessageManager: the conversation, always valid for the provider, mirrored to an append-only JSONL transcript.

Transcripts live in the XDG data dir (`sessions/<id>.jsonl`), one record per line, written as they happen:
each tool result is appended the moment its call finishes, so after a `kill -9` a resumed session knows
the true outcome of every finished call. Records: meta, message, approval, usage, clear, replace,
tool_started. When the disk refuses a record the session goes on in memory, keeps the unwritten records
and writes them as soon as the disk takes them again; the UI is told once, and the status line says so.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from framework_core.config.json_store import loads_bounded
from framework_core.core.history import repair
from framework_core.core.journal import SessionBusy, Transcript
from framework_core.core.session_list import (MAX_RECORD_DEPTH, SessionInfo, damaged_transcripts, latest_session,
                                              list_sessions, sessions_dir)
from framework_core.core.accounting import Ledger
from framework_core.lial_core import Message, ToolResult, Usage

__all__ = ["LoadedSession", "MessageManager", "SessionBusy", "SessionInfo", "Transcript", "find_session",
           "damaged_transcripts", "latest_session", "list_sessions", "sessions_dir",
           "load_transcript", "open_session", "resume_session", "secrets_in_env"]

ROLES = ("user", "assistant", "tool_result")
MAX_BACKLOG_BYTES = 64 * 1024 * 1024  # unwritten records kept for a retry; past this the oldest are dropped


def _loads(line: str) -> Any:
    return loads_bounded(line, max_depth=MAX_RECORD_DEPTH)


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def session_uuid(session_id: str) -> str:
    """The session's id as a UUID, for tools written for Claude Code's JSON (`--resume` takes either form)."""
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, "laca-session:" + session_id))



@dataclass
class LoadedSession:
    meta: dict[str, Any]
    messages: list[Message]
    usage: Usage
    warnings: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)  # what load changed; written back by resume_session
    appended: int = 0  # when the only repair was answering calls at the end: how many results it added
    ledger: Ledger = field(default_factory=Ledger)  # tokens per turn


def _message(rec: dict[str, Any]) -> Message:
    raw = rec["message"]
    if not isinstance(raw, dict) or raw.get("role") not in ROLES or not isinstance(raw.get("content") or "", str):
        raise ValueError("not a message")
    return Message.from_dict(raw)


def load_transcript(path: Path) -> LoadedSession:
    """Rebuild a session. Corrupt or truncated lines are skipped with a warning, never fatal."""
    meta: dict[str, Any] = {}
    messages: list[Message] = []
    usage = Usage()
    ledger = Ledger()
    skipped: list[str] = []  # unreadable lines since the last replace or clear (earlier ones no longer matter)
    started: set[str] = set()
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = _loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
                kind = rec.get("type")
                if kind == "meta":
                    meta.update({k: v for k, v in rec.items() if k not in ("type", "ts")})
                elif kind == "message":
                    messages.append(_message(rec))
                    if messages[-1].role == "user":
                        ledger.start_turn(messages[-1].content)
                elif kind == "clear":
                    messages, skipped = [], []
                elif kind == "replace":
                    messages, skipped = [_message({"message": m}) for m in rec["messages"]], []
                elif kind == "usage":
                    request = Usage(**{k: int(v) for k, v in rec.get("usage", {}).items()})
                    usage = usage + request
                    ledger.add(request)
                elif kind == "tool_started":
                    started.add(str(rec.get("request_id")))
                elif kind in ("grant", "grant_revoked") and isinstance(rec.get("grant"), dict):
                    kept = [g for g in meta.get("grants", []) if g != rec["grant"]]
                    meta["grants"] = kept + ([rec["grant"]] if kind == "grant" else [])
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                skipped.append(f"line {n}: skipped an unreadable record ({type(exc).__name__})")
    fixed, fixes = repair(messages, started=started)
    appended = len(fixed) - len(messages) if fixes and fixed[: len(messages)] == messages else 0
    warnings = [f"{path.name} {s}" for s in skipped] + [f"repaired history: {f}" for f in fixes]
    return LoadedSession(meta, fixed, usage, warnings, skipped + fixes, 0 if skipped else appended, ledger)


WriteListener = Callable[[str | None], None]


class MessageManager:
    """The conversation history plus its transcript and token accounting.

    `write_error` is None while every record is on disk; otherwise it says why records are waiting (or,
    with no transcript at all, why the session lives in memory only). `on_write_state` is told each time
    that changes, so the UI can say it once and show a marker until writes succeed again.
    """

    def __init__(self, transcript: Transcript | None = None, session_id: str | None = None,
                 memory_only: str | None = None) -> None:
        self.session_id = session_id or new_session_id()
        self.transcript = transcript
        self.messages: list[Message] = []
        self.usage = Usage()
        self.last_usage = Usage()
        self.ledger = Ledger()  # tokens per turn, for /tokens
        self.memory_only = memory_only  # why there is no transcript, when there should be one
        self.write_error: str | None = memory_only
        self.on_write_state: WriteListener | None = None
        self._backlog: list[bytes] = []
        self._backlog_bytes = 0
        self.dropped_records = 0

    # -- building ---------------------------------------------------------------------------
    def start(self, meta: dict[str, Any]) -> None:
        self._record({"type": "meta", "session_id": self.session_id, **meta})

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self._record({"type": "message", "message": message.to_dict()})

    def add_user(self, text: str) -> None:
        self.ledger.start_turn(text)
        self.add(Message("user", text))

    def add_result(self, result: ToolResult) -> None:
        """One tool result, journaled the moment its call finishes."""
        self.add(Message.tool_result(result))

    def record_usage(self, usage: Usage, *, side_request: bool = False) -> None:
        """Count a request's tokens. A side request (a summary for compaction) counts in the totals but does
        not describe the conversation's context, so `last_usage` is left alone."""
        self.usage = self.usage + usage
        self.ledger.add(usage)
        if not side_request:
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
        self.ledger = loaded.ledger

    # -- validity ---------------------------------------------------------------------------
    def repair(self) -> list[str]:
        """Make the history valid (every call answered); record the fix in the transcript."""
        fixed, fixes = repair(self.messages)
        if fixes:
            self.replace(fixed, "repair: " + "; ".join(fixes))
        return fixes

    # -- the journal ------------------------------------------------------------------------
    @property
    def saved(self) -> bool:
        """Everything recorded so far is on disk."""
        return self.transcript is not None and self.write_error is None

    def _record(self, record: dict[str, Any]) -> None:
        if self.transcript is None:
            return
        data = self.transcript.encode(record)
        self._backlog.append(data)
        self._backlog_bytes += len(data)
        while self._backlog_bytes > MAX_BACKLOG_BYTES and len(self._backlog) > 1:
            self._backlog_bytes -= len(self._backlog.pop(0))
            self.dropped_records += 1
        self.flush()

    def flush(self) -> bool:
        """Write what is waiting. True when nothing is left unwritten."""
        if self.transcript is None:
            return False
        while self._backlog:
            try:
                self.transcript.write_bytes(self._backlog[0])
            except OSError as exc:
                self._set_write_error(f"cannot write the session transcript {self.transcript.path}: "
                                      f"{exc.strerror or exc}")
                return False
            self._backlog_bytes -= len(self._backlog.pop(0))
        self._set_write_error(None)
        return True

    def _set_write_error(self, error: str | None) -> None:
        if (error is None) == (self.write_error is None):
            return  # said once; said again only when the state changes
        self.write_error = error
        if self.on_write_state is not None:
            self.on_write_state(error)

    def close(self) -> str | None:
        """Write what is waiting and release the transcript. Returns None when all is saved, else why not."""
        if self.transcript is None:
            return self.memory_only or "this session has no transcript"
        ok = self.flush()
        waiting = len(self._backlog)
        self.transcript.close()
        if ok and not self.dropped_records:
            return None
        lost = waiting + self.dropped_records
        return f"{self.write_error or 'records were dropped'} ({lost} record{'s' if lost != 1 else ''} not saved)"


def open_session(data_dir: Path, session_id: str | None = None,
                 secrets_to_mask: tuple[str, ...] = ()) -> MessageManager:
    """A session with its transcript open and locked. Raises SessionBusy when another LACA holds it; a data dir
    that cannot be written gives a session kept in memory (its `memory_only` says why)."""
    sid = session_id or new_session_id()
    path = sessions_dir(data_dir) / f"{sid}.jsonl"
    transcript = Transcript(path, secrets_to_mask, session_id=sid)
    try:
        transcript.open()
    except OSError as exc:
        why = (f"cannot write to {sessions_dir(data_dir)} ({exc.strerror or exc}): this session and the input "
               "history are kept in memory only and will not be saved")
        return MessageManager(None, sid, memory_only=why)
    return MessageManager(transcript, sid)


def resume_session(data_dir: Path, path: Path, secrets_to_mask: tuple[str, ...] = (), *,
                   fork: bool = False) -> tuple[MessageManager, LoadedSession]:
    """Reopen a session (locked first, then read, so no other writer can slip in between) and write back
    what loading had to repair, so the next resume does not repair it again. With `fork`, a new session
    starts from a copy of its history and the original is left alone."""
    if fork:
        loaded = load_transcript(path)
        session = open_session(data_dir, secrets_to_mask=secrets_to_mask)
        meta = {k: v for k, v in loaded.meta.items() if k not in ("session_id", "pid")}
        session.start({**meta, "forked_from": path.stem, "pid": os.getpid()})
        session.replace(loaded.messages, f"forked from session {path.stem}")
        session.usage, session.ledger = loaded.usage, loaded.ledger
        return session, loaded
    session = open_session(data_dir, path.stem, secrets_to_mask)
    loaded = load_transcript(path)
    if loaded.appended:  # the usual case after a kill: results for the calls at the end, appended
        session.restore(LoadedSession(loaded.meta, loaded.messages[: -loaded.appended], loaded.usage,
                                      ledger=loaded.ledger))
        for message in loaded.messages[-loaded.appended:]:
            session.add(message)
    else:
        session.restore(loaded)
        if loaded.repairs:
            session.replace(loaded.messages, "repaired on load: " + "; ".join(loaded.repairs))
    return session, loaded


def find_session(data_dir: Path, session_id: str) -> Path | None:
    folder = sessions_dir(data_dir)
    exact = folder / f"{session_id}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(folder.glob(f"{session_id}*.jsonl")) if folder.is_dir() else []
    return matches[0] if len(matches) == 1 else None


def secrets_in_env(env_vars: list[str]) -> tuple[str, ...]:
    return tuple(os.environ[v] for v in env_vars if os.environ.get(v))


def find_session_by_prefix(data: Path, wanted: str) -> Path:
    """A session by its id, its UUID (as `-p --output-format json` gives it), a unique prefix of the id, or a
    unique ending (its last characters)."""
    from framework_core.errors import ConfigError
    from framework_core.wording import invocation

    exact = sessions_dir(data) / f"{wanted}.jsonl"
    if wanted and "/" not in wanted and exact.is_file():
        return exact
    ids = [s.session_id for s in list_sessions(data)]
    matches = ([i for i in ids if session_uuid(i) == wanted.lower()] or [i for i in ids if i.startswith(wanted)]
               or [i for i in ids if i.endswith(wanted)])
    if len(matches) == 1:
        return sessions_dir(data) / f"{matches[0]}.jsonl"
    if matches:
        raise ConfigError(f"'{wanted}' matches {len(matches)} sessions ({', '.join(matches[:5])}"
                          f"{', …' if len(matches) > 5 else ''}): give more of the id")
    raise ConfigError(f"no session '{wanted}'. List them with: {invocation('--resume')}")


def recap(session: MessageManager) -> list[str]:
    """The last exchange of a resumed session: what the user asked and how the reply began."""
    last_user = next((m for m in reversed(session.messages) if m.role == "user" and m.content.strip()), None)
    last_reply = next((m for m in reversed(session.messages) if m.role == "assistant" and m.content.strip()), None)
    lines = []
    for who, m in (("you", last_user), ("reply", last_reply)):
        if m is not None:
            text = " ".join(m.content.split())
            lines.append(f"  {who}: {text[:150]}{'…' if len(text) > 150 else ''}")
    return ["Last exchange:", *lines] if lines else []
