"""`laca policy check`: explain how commands are classified and what the session would do with them.

The decision uses the same rule set as the REPL (the allowlist, rule files, `~/.config/laca/rules.yaml` and a
trusted workspace's `.laca/rules.yaml`), so a command an allow rule lets run is reported as allowed, and one a
deny rule names as denied, with the rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING

from framework_core.policy.classifier import classify_command
from framework_core.policy.levels import Verdict

if TYPE_CHECKING:
    from framework_core.policy.decide import Decision, PolicyState

ACTION_WORDS = {"allow": "runs without asking", "ask": "asks first", "deny": "blocked"}


def decide_command(cmd: str, state: "PolicyState", git_runs: tuple[str, ...] = ()) -> "Decision":
    from framework_core.policy.decide import CallFacts, decide

    return decide(CallFacts(tool_name="executeBashCommand", kind="bash", command=cmd, home=str(Path.home()),
                            git_runs=git_runs), state)


def _judged(cmd: str, state: "PolicyState", git_runs: tuple[str, ...]) -> "tuple[Verdict, Decision]":
    """The classification, raised to what the decision says when the repository's configuration makes a
    read-only git command run a program, and the decision."""
    v, d = classify_command(cmd), decide_command(cmd, state, git_runs)
    if d.level > v.level and d.action != "deny":
        v = Verdict(d.level, d.reasons, v.network)
    return v, d


def run_policy_check(commands: list[str], jsonl: bool, stdin: IO[str], stdout: IO[str],
                     state: "PolicyState | None" = None, git_runs: tuple[str, ...] = ()) -> int:
    """`git_runs`: what the working directory's repository configures git's reading commands to run."""
    from framework_core.policy.decide import PolicyState

    state = state or PolicyState()
    if jsonl:
        for line in stdin:
            if not line.strip():
                continue
            try:
                cmd = json.loads(line)["cmd"]
                if not isinstance(cmd, str):
                    raise TypeError("cmd must be a string")
            except (ValueError, KeyError, TypeError) as exc:
                problem = f"expected {{\"cmd\": \"…\"}}: {exc}"
                stdout.write(json.dumps({"input": line.rstrip("\n"), "error": problem}) + "\n")
                continue
            v, d = _judged(cmd, state, git_runs)
            stdout.write(json.dumps({"cmd": cmd, "level": v.level.label, "network": v.network,
                                     "reasons": list(v.reasons), "decision": d.action,
                                     "matched": list(d.matched)}) + "\n")
            stdout.flush()
        return 0
    for cmd in commands:
        v, d = _judged(cmd, state, git_runs)
        net = "  [uses the network]" if v.network else ""
        stdout.write(f"{v.level.label.upper():14} {cmd}{net}\n")
        for reason in v.reasons:
            stdout.write(f"    - {reason}\n")
        why = f" ({'; '.join(d.matched)})" if d.matched else ""
        if d.action == "deny" and not d.matched:
            why = " (Dangerous; /allow-dangerous on makes it ask)"
        stdout.write(f"    → {ACTION_WORDS[d.action]}{why}\n")
    return 0
