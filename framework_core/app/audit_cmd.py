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

SINCE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?")


def _log_for(workspace: str | None) -> tuple[Path, Path]:
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.audit import log_path

    where = Path(workspace).expanduser().resolve() if workspace else Path.cwd().resolve()
    if workspace and not where.is_dir():
        raise ConfigError(f"--workspace {workspace}: no such folder")
    return where, log_path(user_data_dir(), where)


def run_verify(workspace: str | None, out: TextIO) -> int:
    from framework_core.core.audit import verify

    where, path = _log_for(workspace)
    if not path.is_file():
        out.write(f"No audit log for {where} ({path}): no tool call was recorded there, or the log was removed.\n")
        return 1
    try:
        result = verify(path)
    except OSError as exc:
        raise ConfigError(f"cannot read the audit log {path}: {exc.strerror or exc}") from None
    if result.intact:
        out.write(f"Audit log of {where}: {result.records} records, intact ({path}).\n")
        return 0
    out.write(f"Audit log of {where} ({path}) is NOT intact: line {result.bad_line}: {result.why}. "
              f"The {result.records} records before it check out.\n")
    return 1


def run_replay(workspace: str | None, since: str | None, overrides: "Overrides", out: TextIO) -> int:
    from framework_core.app.wiring import build_policy_state
    from framework_core.config.load import load_config
    from framework_core.core.audit import read_records, replay

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
