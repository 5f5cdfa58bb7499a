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

if TYPE_CHECKING:
    from framework_core.policy.decide import Decision, PolicyState

ACTION_WORDS = {"allow": "runs without asking", "ask": "asks first", "deny": "blocked"}


def decide_command(cmd: str, state: "PolicyState") -> "Decision":
    from framework_core.policy.decide import CallFacts, decide

    return decide(CallFacts(tool_name="executeBashCommand", kind="bash", command=cmd, home=str(Path.home())), state)


def run_policy_check(commands: list[str], jsonl: bool, stdin: IO[str], stdout: IO[str],
                     state: "PolicyState | None" = None) -> int:
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
            v = classify_command(cmd)
            d = decide_command(cmd, state)
            stdout.write(json.dumps({"cmd": cmd, "level": v.level.label, "network": v.network,
                                     "reasons": list(v.reasons), "decision": d.action,
                                     "matched": list(d.matched)}) + "\n")
            stdout.flush()
        return 0
    for cmd in commands:
        v = classify_command(cmd)
        d = decide_command(cmd, state)
        net = "  [uses the network]" if v.network else ""
        stdout.write(f"{v.level.label.upper():14} {cmd}{net}\n")
        for reason in v.reasons:
            stdout.write(f"    - {reason}\n")
        why = f" ({'; '.join(d.matched)})" if d.matched else ""
        if d.action == "deny" and not d.matched:
            why = " (Dangerous; /allow-dangerous on makes it ask)"
        stdout.write(f"    → {ACTION_WORDS[d.action]}{why}\n")
    return 0
