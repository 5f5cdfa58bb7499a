"""`laca audit verify` and `laca audit replay`: the workspace's audit log (core/audit.py), checked or judged again.

Replay builds today's policy with the functions a session uses (`wiring.build_policy_state`: the allowlist,
the user's and the workspace's rule files, as far as the workspace is trusted) and judges each recorded bash
command with `policy.decide`, as TEPS does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.config.load import Overrides
    from framework_core.core.audit_check import Verified

SINCE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?")


def _log_for(workspace: str | None) -> tuple[Path, Path]:
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.audit import log_path

    where = Path(workspace).expanduser().resolve() if workspace else Path.cwd().resolve()
    if workspace and not where.is_dir():
        raise ConfigError(f"--workspace {workspace}: no such folder")
    return where, log_path(user_data_dir(), where)


def run_verify(workspace: str | None, out: TextIO) -> int:
    """Exit 0: the chain holds (keyed) and every head the sessions recorded is in it; 1: it was changed, cut short
    or deleted; 2: LACA cannot vouch for it (only records from before the key, or the key is missing)."""
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.audit_check import anchors_for, verify
    from framework_core.core.session import sessions_dir

    where, path = _log_for(workspace)
    anchors = anchors_for(sessions_dir(user_data_dir()), path)
    if not path.is_file() and not path.is_symlink():
        if anchors:
            newest = max(anchors, key=lambda a: a.seq)
            out.write(f"The audit log of {where} ({path}) is MISSING: session {newest.session} recorded its head at "
                      f"record {newest.seq}, so the log was deleted or moved.\n")
            return 1
        out.write(f"No audit log for {where} ({path}): no tool call was recorded there, or the log was removed "
                  "before any session recorded its head.\n")
        return 1
    if path.is_symlink():
        out.write(f"The audit log of {where} ({path}) is a symlink: LACA neither writes nor reads through it (its "
                  "target is left unchanged). Someone replaced the log; remove the symlink.\n")
        return 1
    try:
        result = verify(path, anchors)
    except OSError as exc:
        raise ConfigError(f"cannot read the audit log {path}: {exc.strerror or exc}") from None
    for line in report(where, path, result):
        out.write(line + "\n")
    return 0 if result.intact and not result.legacy_only else 2 if result.intact or result.no_key else 1


def report(where: Path, path: Path, result: "Verified") -> list[str]:
    """What verify checked, what it found, and what it cannot catch."""
    if result.no_key:
        return [f"Audit log of {where} ({path}): CANNOT be checked: {result.no_key}."]
    if not result.intact:
        return [f"Audit log of {where} ({path}) is NOT intact: line {result.bad_line}: {result.why}. "
                f"The {result.records} records before it check out."]
    out = [f"Audit log of {where}: {result.records} records, intact ({path})."]
    checked = [f"{result.keyed} keyed records (HMAC-SHA256 under the key in LACA's data folder), their order and "
               "links"] if result.keyed else []
    if result.legacy:
        checked.append(f"{result.legacy} records from before the key (plain sha256"
                       + (", pinned by the keyed records after them)" if result.keyed else ")"))
    checked.append(f"{result.anchors} head(s) recorded in session journals" if result.anchors
                   else "no session journal recorded a head of this log, so a cut at its end would not show")
    out.append("Checked: " + "; ".join(checked) + ".")
    if result.legacy_only:
        out.append("LEGACY-UNKEYED: every record is from before LACA keyed its log. The chain is consistent, but "
                   "anyone able to write the file could have rewritten it consistently; LACA cannot vouch for it. "
                   "The next record LACA appends is keyed and pins these.")
    if result.cut_line is not None:
        out.append(f"Line {result.cut_line}, the last, is a record cut by a failed write (a full disk, a crash), not "
                   "tampering: it is not counted, and the next append sets it aside and chains on.")
    if result.repairs:
        out.append(f"{len(result.repairs)} cut record(s) were set aside earlier: {', '.join(result.repairs[:3])} "
                   f"(beside the log).")
    out.append("Not caught: someone who has LACA's data folder (the key, the log and the session journals) can "
               "rewrite all three consistently.")
    return out


def run_replay(workspace: str | None, since: str | None, overrides: "Overrides", out: TextIO) -> int:
    from framework_core.app.wiring import build_policy_state
    from framework_core.config.load import load_config
    from framework_core.core.audit_check import read_records, replay

    if since is not None and not SINCE.fullmatch(since):
        raise ConfigError(f"--since {since}: give a date as YYYY-MM-DD (or YYYY-MM-DDTHH:MM, UTC)")
    where, path = _log_for(workspace)
    if not path.is_file():
        out.write(f"No audit log for {where} ({path}).\n")
        return 1
    from framework_core.core.audit import BASH_TOOL
    from framework_core.tools.builtin import builtin_registry

    state = build_policy_state(load_config(where, overrides))
    spec = builtin_registry().get(BASH_TOOL)
    changed, judged = replay(read_records(path, since.replace(" ", "T") if since else None),
                             lambda command, dangerous: _judge(state, spec, command, dangerous))
    scope = f" since {since}" if since else ""
    if not changed:
        out.write(f"{judged} recorded command(s){scope}: each is decided as it was.\n")
        return 0
    out.write(f"{len(changed)} of {judged} recorded command(s){scope} would be decided differently now:\n")
    for c in changed:
        out.write(f"  line {c.line} ({c.ts}): {c.command}\n      was: {c.was}\n      now: {c.now}\n")
    return 0


def _judge(state, spec, command: str, allow_dangerous: bool):  # -> Decision
    """The policy's decision on a bash command, as TEPS would make it now (no session grants)."""
    from dataclasses import replace

    from framework_core.core.audit import BASH_TOOL
    from framework_core.policy.decide import CallFacts, decide

    facts = CallFacts(tool_name=BASH_TOOL, kind="bash", source=spec.source if spec else "builtin",
                      permission=spec.permission if spec else None, command=command, home=str(Path.home()))
    return decide(facts, replace(state, allow_dangerous=allow_dangerous))
