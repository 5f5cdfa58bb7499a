"""The audit log: every decision about a tool call, appended to a per-workspace, keyed, hash-chained JSON-lines file.

One file per workspace in LACA's data folder (`audit/<digest of the workspace path>.jsonl`; never inside the
workspace, and hidden from commands like the rest of the data folder). Each record says the call (tool name
and arguments, long values cut and digested), the policy's verdict and its reasons, what let it run (a rule, a
grant, the user's answer, the mode), the sandbox it ran in, what it changed and how it ended.

The chain (checked by `audit_check.verify`): every record carries `seq` (its place, from 1), `prev` (the sha256 of
the previous record's line; the first record: `GENESIS`) and `hash`, the HMAC-SHA256 of its own content under
the key in the data folder (`audit_key.py`). Someone without the key cannot rewrite, remove or forge a record so
that the chain still checks out. The head (the newest `seq` and `hash`) is also written to the session's own
journal after each call (`on_head`), outside the log, so a log cut short or deleted is caught too. What this
cannot catch: someone who has the key and can write both the log and the journals.

The log and its lock are opened without following a symlink. A record cut by a failed write (a full disk) is
said at the time; the next append sets the cut bytes aside in a named file (`<log>.cut-<time>`), says so, and
chains on from the last whole record, noting the repair in its own record.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any, Callable

from framework_core.config.json_store import file_lock
from framework_core.core.audit_key import key_path, load_or_make_key, mac

GENESIS = "0" * 64
AUDIT_DIR = "audit"
MAX_STRING = 4000  # longer argument values are cut (with their length and digest) in the record
MAX_ITEMS = 100
MAX_DEPTH = 8
BASH_TOOL = "executeBashCommand"


def log_path(data_dir: Path, workspace: Path) -> Path:
    digest = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    return data_dir / AUDIT_DIR / f"{digest}.jsonl"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a record's `hash` covers: its JSON without `hash`, keys sorted, no spaces."""
    body = {k: v for k, v in record.items() if k != "hash"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def bounded(value: Any, mask: tuple[str, ...] = (), depth: int = 0) -> Any:
    """A copy small enough for the log: strings cut at MAX_STRING (with their length and digest), lists and
    objects at MAX_ITEMS entries and MAX_DEPTH levels; known secrets replaced by ***."""
    if isinstance(value, str):
        for secret in mask:
            value = value.replace(secret, "***")
        if len(value) <= MAX_STRING:
            return value
        return value[:MAX_STRING] + f"…[cut: {len(value)} characters, sha256 {_sha(value.encode())[:16]}]"
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return "…[nested too deeply for the log]"
    if isinstance(value, dict):
        items = list(value.items())
        out = {str(k): bounded(v, mask, depth + 1) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            out["…"] = f"{len(items) - MAX_ITEMS} more keys"
        return out
    if isinstance(value, (list, tuple)):
        return [bounded(v, mask, depth + 1) for v in value[:MAX_ITEMS]] + (
            [f"…{len(value) - MAX_ITEMS} more items"] if len(value) > MAX_ITEMS else [])
    return bounded(str(value), mask, depth)


def allowed_by(decision: Any, answer: Any, status: str, mode: str, dry_run: bool = False) -> str | None:
    """What let the call run: the user's answer, the rule or grant the policy matched, or the mode."""
    if decision is None or status in ("blocked_by_policy", "dry_run") or (answer and answer.choice == "deny"):
        return None
    if answer is not None:
        grant = f", remembered as {answer.grant.label}" if getattr(answer, "grant", None) else ""
        return f"the user ({answer.choice}{grant})"
    if decision.action == "allow":
        return "; ".join(decision.matched) or "the policy"
    if status == "declined_by_user":
        return None
    return "dry run: a preview in the sandbox's overlay" if dry_run else f"{mode} mode"


class AuditLog:
    """Appends one record per finished tool call. Never raises into the call: a failure to write is said once
    through `on_problem` and kept in `problem`."""

    def __init__(self, path: Path, workspace: Path, *, session_id: str = "", mask: tuple[str, ...] = ()) -> None:
        self.path = path
        self.workspace = str(workspace)
        self.session_id = session_id
        self.mask = tuple(s for s in mask if s and len(s) >= 8)
        self.problem: str | None = None
        self.on_problem: Callable[[str], None] = lambda message: None
        self.on_head: Callable[[int, str], None] = lambda seq, head: None  # the session's journal keeps it
        self._key: bytes | None = None

    def record_call(self, request: Any, decision: Any, answer: Any, result: Any, duration: float, *,
                    engine: Any, fate: Any = None) -> None:
        """The one call TEPS makes when a call's result is final (`engine` gives the mode, dry run, policy
        state and sandbox at that moment; `fate`, core/fate.py's Fate of the call, what decided it and the
        scope its process got). A record that cannot be made is said, never raised into the call."""
        try:
            record = self._call_record(request, decision, answer, result, duration, engine, fate)
        except Exception as exc:  # a record must never break the call it records
            self._said(f"could not make the audit record of {request.tool_name} ({type(exc).__name__}: {exc}); "
                       "tool calls go on")
            return
        self.append(record)

    def _call_record(self, request: Any, decision: Any, answer: Any, result: Any, duration: float,
                     engine: Any, fate: Any) -> dict[str, Any]:
        data = result.data if isinstance(result.data, dict) else {}
        sandbox = getattr(engine, "sandbox", None)
        policy = getattr(engine, "policy", None)
        mode = str(getattr(engine, "mode", ""))
        record = {
            "call": {"id": request.request_id, "tool": request.tool_name,
                     "arguments": bounded(request.parameters, self.mask),
                     "arguments_sha256": _sha(json.dumps(request.parameters, sort_keys=True, default=str)
                                              .encode())},
            "verdict": None if decision is None else {
                "action": decision.action, "level": decision.level.label, "reasons": list(decision.reasons),
                "matched": list(decision.matched), "network": bool(decision.network)},
            "allowed_by": allowed_by(decision, answer, result.status, mode, bool(getattr(engine, "dry_run", False)))
            if fate is None else (str(fate.by) if fate.verb in ("run", "preview") else None),
            "answer": None if answer is None else {
                "choice": answer.choice, "reason": bounded(answer.reason, self.mask),
                "grant": answer.grant.label if answer.grant else None, "unsandboxed": answer.unsandboxed,
                "preview": answer.preview},
            "fate": None if fate is None else {
                "verb": fate.verb, "by": bounded(fate.by, self.mask),
                "scope": {k: v for k, v in vars(fate.scope).items() if v}},
            "mode": mode, "dry_run": bool(getattr(engine, "dry_run", False)),
            "allow_dangerous": bool(getattr(policy, "allow_dangerous", False)),
            "sandbox": None if sandbox is None else {
                "profile": sandbox.profile, "active": bool(sandbox.active), "overlay": bool(sandbox.overlay)},
            "changes": bounded(data.get("changes"), self.mask),
            "result": {"status": result.status, "exit_code": data.get("exit_code"),
                       "error": bounded(data.get("error_message"), self.mask)},
            "duration_s": round(duration, 3),
        }
        return record

    def append(self, record: dict[str, Any]) -> None:
        full = {"v": VERSION, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "workspace": self.workspace,
                "session": self.session_id, **record}
        try:
            if self._key is None:
                self._key = load_or_make_key(key_path(self.path))
            with file_lock(self.path):
                seq, head = self._append_locked(full, self._key)
        except CutWrite as exc:
            self._said(f"the audit record of this call was cut by a failed write to {self.path} ({exc.why}): the "
                       "next record sets the cut line aside and the chain goes on; tool calls go on")
            return
        except OSError as exc:
            self._said(f"could not write the audit log {self.path} ({exc.strerror or exc}); tool calls go on, "
                       "unrecorded")
            return
        self.problem = None  # written again: a later problem is said again
        self.on_head(seq, head)

    def _said(self, message: str) -> None:
        if self.problem is None:
            self.on_problem(message)
        self.problem = message

    def _append_locked(self, record: dict[str, Any], key: bytes) -> tuple[int, str]:
        fd = open_log(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            last, end, cut = tail(fd)
            if cut:
                record["repaired"] = self._set_aside(fd, end, cut)
            record["seq"] = _seq_after(fd, last, end)
            record["prev"] = GENESIS if last is None else _sha(last)
            record["hash"] = mac(key, canonical(record))
            data = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            _write_all(fd, data + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        return record["seq"], record["hash"]

    def _set_aside(self, fd: int, end: int, cut: bytes) -> dict[str, Any]:
        """Move the bytes of a record cut by a failed write into a file of their own, cut them from the log,
        say so; returns what the next record notes of the repair."""
        aside = self.path.with_name(f"{self.path.name}.cut-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        out = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            _write_all(out, cut)
            os.fsync(out)
        finally:
            os.close(out)
        os.ftruncate(fd, end)
        self.on_problem(f"the audit log {self.path} ended in a record cut by a failed write ({len(cut)} bytes): "
                        f"set aside in {aside}; the chain goes on from the last whole record")
        return {"set_aside": aside.name, "bytes": len(cut)}


VERSION = 2  # keyed records (1: plain sha256, before the key; `audit verify` says which it reads)


class CutWrite(OSError):
    """Part of a record reached the log before the write failed."""

    def __init__(self, why: str) -> None:
        super().__init__(errno.EIO, why)
        self.why = why


def open_log(path: Path, flags: int) -> int:
    """Open the log without following a symlink (OSError naming it; its target is left alone); only a regular
    file."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "it is a symlink; LACA does not follow it, and its target is left "
                                       "unchanged") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "it is not a regular file")
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except OSError as exc:
            if len(view) < len(data):
                raise CutWrite(exc.strerror or str(exc)) from None
            raise


def tail(fd: int) -> tuple[bytes | None, int, bytes]:
    """(the last whole line without its newline, or None; where the whole lines end; the bytes after them, a
    line that was never finished)."""
    size = os.fstat(fd).st_size
    last_nl = _newline_before(fd, size)
    cut = os.pread(fd, size - last_nl - 1, last_nl + 1) if size - last_nl - 1 > 0 else b""
    if last_nl < 0:
        return None, 0, cut
    prev_nl = _newline_before(fd, last_nl)
    return os.pread(fd, last_nl - prev_nl - 1, prev_nl + 1), last_nl + 1, cut


def _newline_before(fd: int, end: int) -> int:
    """The offset of the last newline before `end`, or -1."""
    pos = end
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        found = os.pread(fd, step, pos).rfind(b"\n")
        if found >= 0:
            return pos + found
    return -1


def _seq_after(fd: int, last: bytes | None, end: int) -> int:
    """The next record's place: one after the last record's `seq` (a log from before `seq`: its lines counted)."""
    if last is None:
        return 1
    try:
        seq = json.loads(last).get("seq")
    except (ValueError, AttributeError):
        seq = None
    if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0:
        return seq + 1
    count, offset = 0, 0
    while offset < end:
        block = os.pread(fd, min(1 << 20, end - offset), offset)
        if not block:
            break
        count += block.count(b"\n")
        offset += len(block)
    return count + 1
