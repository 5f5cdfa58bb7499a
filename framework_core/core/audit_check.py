"""Reading the audit log back (core/audit.py): `verify` checks the keyed chain and the heads the session
journals recorded; `read_records` and `replay` judge the recorded commands again.

What `verify` checks, in order: every line is a whole record (a last line cut by a failed write is told apart:
it is not a record, and the next append sets it aside); each keyed record's HMAC under the data folder's key, its
`seq` and its link to the line before; records from before the key (version 1, plain sha256) only for their own
hash and link, and never after a keyed one; then every head a session's journal recorded (`audit_head`) must
be in the log, the same record at the same place, so a log cut short, rewritten or deleted is caught. What it
cannot catch: someone with the key and write access to the log and the journals (all in the data folder).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from framework_core.config.json_store import DamagedFile, loads_bounded
from framework_core.core.audit import BASH_TOOL, GENESIS, MAX_DEPTH, _sha, canonical
from framework_core.core.audit_key import KeyProblem, key_path, mac, read_key, same

HEAD_RECORD = "audit_head"  # the journal record of the log's head after a call


@dataclass(frozen=True)
class Anchor:
    """A head of the log as a session's journal recorded it after a call."""

    session: str
    seq: int
    head: str


@dataclass
class Verified:
    records: int
    bad_line: int | None = None  # the first line that was changed, removed around or damaged
    why: str = ""
    keyed: int = 0  # records checked with the key
    legacy: int = 0  # records from before the key (plain sha256)
    cut_line: int | None = None  # the last line, cut by a failed write (not a record; not tampering)
    repairs: list[str] = field(default_factory=list)  # files cut lines were set aside in
    anchors: int = 0  # heads from session journals checked
    no_key: str = ""  # why keyed records could not be checked

    @property
    def intact(self) -> bool:
        return self.bad_line is None and not self.no_key

    @property
    def legacy_only(self) -> bool:
        """Nothing in the log is keyed: its chain is consistent, but anyone could have rewritten it so."""
        return self.intact and self.keyed == 0 and self.legacy > 0


def lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, line without its newline, whether it ended with a newline)."""
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            yield n, raw.rstrip(b"\n"), raw.endswith(b"\n")


def verify(path: Path, anchors: tuple[Anchor, ...] | list[Anchor] = (), *, key: bytes | None = None) -> Verified:
    """Check the chain record by record, then the heads sessions recorded (`anchors`); the key is read from
    beside the log unless given."""
    if key is None:
        try:
            key = read_key(key_path(path))
        except KeyProblem as exc:
            return Verified(0, no_key=str(exc.strerror))
    out = Verified(0)
    heads: dict[int, str] = {}
    prev = GENESIS
    for n, line, ended in lines(path):
        if not ended:
            out.cut_line = n  # only the last line can end without a newline
            break
        why = _check(line, out, key, prev, key_path(path))
        if why:
            out.bad_line, out.why = n, why
            return out
        out.records += 1
        heads[out.records] = json.loads(line)["hash"]
        prev = _sha(line)
    return _check_anchors(out, heads, anchors)


def _check(line: bytes, out: Verified, key: bytes | None, prev: str, key_file: Path) -> str:
    """Why this line is not the next record of the chain ('' when it is); counts it as keyed or legacy."""
    try:
        record = loads_bounded(line.decode("utf-8"), max_depth=MAX_DEPTH + 6)
    except (DamagedFile, UnicodeDecodeError) as exc:
        return f"not a readable record ({exc})"
    if not isinstance(record, dict) or not isinstance(record.get("hash"), str):
        return "not an audit record"
    if record.get("v") == 1:
        if out.keyed:
            return "an unkeyed record after keyed ones: it was not written by LACA (records are keyed since then)"
        if record["hash"] != _sha(canonical(record)):
            return "its content does not match its hash: it was changed"
        out.legacy += 1
    else:
        if key is None:
            out.no_key = (f"the log's key {key_file} is missing: its keyed records cannot be checked (the key "
                          "was deleted, or this is not the data folder that wrote them)")
            return ""
        if not same(record["hash"], mac(key, canonical(record))):
            return ("its content does not match its keyed hash: it was changed, or written by someone without "
                    "LACA's key")
        if record.get("seq") != out.records + 1:
            return (f"it says it is record {record.get('seq')}, and it is record {out.records + 1}: records were "
                    "removed or inserted before it")
        out.keyed += 1
        repaired = record.get("repaired")
        if isinstance(repaired, dict):
            out.repairs.append(str(repaired.get("set_aside")))
    if record.get("prev") != prev:
        return ("it does not follow the record before it: a record was changed, removed or inserted before this "
                "line")
    return ""


def _check_anchors(out: Verified, heads: dict[int, str], anchors: tuple[Anchor, ...] | list[Anchor]) -> Verified:
    if out.no_key:
        return out
    for anchor in sorted(anchors, key=lambda a: a.seq):
        out.anchors += 1
        if anchor.seq > out.records:
            out.bad_line = out.records + 1
            out.why = (f"the log ends after record {out.records}, but session {anchor.session} recorded its head at "
                       f"record {anchor.seq}: records were removed from its end")
            return out
        if not same(heads[anchor.seq], anchor.head):
            out.bad_line = anchor.seq  # records are one per line while the chain holds
            out.why = (f"record {anchor.seq} is not the one session {anchor.session} recorded: the log was "
                       "rewritten")
            return out
    return out


def anchors_for(sessions: Path, log: Path) -> list[Anchor]:
    """The heads of `log` that the session journals in `sessions` recorded (each session's newest one)."""
    out: list[Anchor] = []
    if not sessions.is_dir():
        return out
    for journal in sorted(sessions.glob("*.jsonl")):
        newest: Anchor | None = None
        try:
            with open(journal, "rb") as fh:
                for raw in fh:
                    if HEAD_RECORD.encode() not in raw:
                        continue
                    anchor = _anchor(raw, journal.stem, log.name)
                    if anchor is not None and (newest is None or anchor.seq >= newest.seq):
                        newest = anchor
        except OSError:
            continue
        if newest is not None:
            out.append(newest)
    return out


def _anchor(raw: bytes, session: str, log_name: str) -> Anchor | None:
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(rec, dict) or rec.get("type") != HEAD_RECORD or rec.get("log") != log_name:
        return None
    seq, head = rec.get("seq"), rec.get("head")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1 or not isinstance(head, str):
        return None
    return Anchor(session, seq, head)


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
