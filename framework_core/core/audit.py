"""The audit log: every decision about a tool call, appended to a per-workspace, tamper-evident JSON-lines file.

One file per workspace in LACA's data folder (`audit/<digest of the workspace path>.jsonl`; never inside the
workspace, and hidden from commands like the rest of the data folder). Each record says the call (tool name
and arguments, long values cut and digested), the policy's verdict and its reasons, what let it run (a rule, a
grant, the user's answer, the mode), the sandbox it ran in, what it changed and how it ended.

Tamper evidence: every record carries `prev`, the sha256 of the previous record's line (the first record:
`GENESIS`), and `hash`, the sha256 of its own content without `hash`. `verify` names the first line whose
content, or whose place in the chain, no longer matches. (Removing records from the end leaves no trace in
the file itself; everything else does.) Records are appended under the file's lock and synced.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from framework_core.config.json_store import DamagedFile, file_lock, loads_bounded

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
        full = {"v": 1, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "workspace": self.workspace,
                "session": self.session_id, **record}
        try:
            with file_lock(self.path):
                self._append_locked(full)
        except OSError as exc:
            self._said(f"could not write the audit log {self.path} ({exc.strerror or exc}); tool calls go on, "
                       "unrecorded")

    def _said(self, message: str) -> None:
        if self.problem is None:
            self.on_problem(message)
        self.problem = message

    def _append_locked(self, record: dict[str, Any]) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            last, terminated = _last_line(fd)
            record["prev"] = GENESIS if last is None else _sha(last)
            record["hash"] = _sha(canonical(record))
            line = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            data = (b"" if terminated else b"\n") + line + b"\n"
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)


def _last_line(fd: int) -> tuple[bytes | None, bool]:
    """(the file's last line without its newline, or None when empty; whether the file ends with a newline)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return None, True
    terminated = os.pread(fd, 1, size - 1) == b"\n"
    end = size - 1 if terminated else size
    chunk, start = b"", end
    while start > 0:
        step = min(65536, start)
        start -= step
        chunk = os.pread(fd, step, start) + chunk
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return chunk[cut + 1:], terminated
    return chunk, terminated


# ---- reading it back ---------------------------------------------------------------------------------------

@dataclass
class Verified:
    records: int
    bad_line: int | None = None  # the first line that was changed, removed around or damaged
    why: str = ""

    @property
    def intact(self) -> bool:
        return self.bad_line is None


def lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, line without its newline, whether it ended with a newline)."""
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            yield n, raw.rstrip(b"\n"), raw.endswith(b"\n")


def verify(path: Path) -> Verified:
    """Check every record's own hash and its link to the one before, in order."""
    prev, count = GENESIS, 0
    for n, line, ended in lines(path):
        if not ended:
            return Verified(count, n, "the last line is incomplete (cut while it was written, or shortened)")
        try:
            record = loads_bounded(line.decode("utf-8"), max_depth=MAX_DEPTH + 6)
        except (DamagedFile, UnicodeDecodeError) as exc:
            return Verified(count, n, f"not a readable record ({exc})")
        if not isinstance(record, dict) or not isinstance(record.get("hash"), str):
            return Verified(count, n, "not an audit record")
        if record["hash"] != _sha(canonical(record)):
            return Verified(count, n, "its content does not match its hash: it was changed")
        if record.get("prev") != prev:
            return Verified(count, n, "it does not follow the record before it: a record was changed, removed "
                                      "or inserted before this line")
        prev, count = _sha(line), count + 1
    return Verified(count)


def read_records(path: Path, since: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """The readable records (line number, record), those from `since` (an ISO date or time) on."""
    out = []
    for n, line, _ in lines(path):
        try:
            record = loads_bounded(line.decode("utf-8", errors="replace"), max_depth=MAX_DEPTH + 6)
        except DamagedFile:
            continue
        if isinstance(record, dict) and (since is None or str(record.get("ts", "")) >= since):
            out.append((n, record))
    return out


@dataclass
class Replayed:
    line: int
    ts: str
    command: str
    was: str  # "allow (needs_confirm) by rule X"
    now: str


def replay(records: list[tuple[int, dict[str, Any]]], judge: Callable[[str, bool], Any]) -> tuple[list[Replayed], int]:
    """Judge every recorded bash command again (`judge(command, allow_dangerous) -> Decision`); returns those
    decided differently now, and how many commands were judged. A call a session grant or an `--allow` of that
    run let through is compared with what the rules alone say (grants last one session)."""
    changed: list[Replayed] = []
    judged = 0
    for n, record in records:
        call, verdict = record.get("call"), record.get("verdict")
        if not isinstance(call, dict) or call.get("tool") != BASH_TOOL or not isinstance(verdict, dict):
            continue
        command = (call.get("arguments") or {}).get("command") if isinstance(call.get("arguments"), dict) else None
        if not isinstance(command, str) or "…[cut:" in command:
            continue
        judged += 1
        now = judge(command, bool(record.get("allow_dangerous")))
        matched = [str(m) for m in verdict.get("matched") or []]
        granted = any(m.startswith(("session grant", "--allow")) for m in matched)
        if granted and now.action in ("allow", "ask") and now.level.label == verdict.get("level"):
            continue  # without the grant the rules say ask or allow: as they did for the grant to apply
        if now.action != verdict.get("action") or now.level.label != verdict.get("level"):
            was_by = f" by {'; '.join(matched)}" if matched else ""
            now_by = f" by {'; '.join(now.matched)}" if now.matched else ""
            changed.append(Replayed(n, str(record.get("ts", "")), command,
                                    f"{verdict.get('action')} ({verdict.get('level')}){was_by}",
                                    f"{now.action} ({now.level.label}){now_by}"))
    return changed, judged
