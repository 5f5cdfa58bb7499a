"""`run_framework.py policy check`: explain how commands are classified."""

from __future__ import annotations

import json
from typing import IO

from framework_core.policy.classifier import classify_command


def run_policy_check(commands: list[str], jsonl: bool, stdin: IO[str], stdout: IO[str]) -> int:
    if jsonl:
        for line in stdin:
            if not line.strip():
                continue
            try:
                cmd = json.loads(line)["cmd"]
                if not isinstance(cmd, str):
                    raise TypeError("cmd must be a string")
            except (ValueError, KeyError, TypeError) as exc:
                error = f"expected {{\"cmd\": \"…\"}}: {exc}"
                stdout.write(json.dumps({"input": line.rstrip("\n"), "error": error}) + "\n")
                continue
            v = classify_command(cmd)
            stdout.write(json.dumps({"cmd": cmd, "level": v.level.label, "network": v.network,
                                     "reasons": list(v.reasons)}) + "\n")
            stdout.flush()
        return 0
    for cmd in commands:
        v = classify_command(cmd)
        net = "  [uses the network]" if v.network else ""
        stdout.write(f"{v.level.label.upper():14} {cmd}{net}\n")
        for reason in v.reasons:
            stdout.write(f"    - {reason}\n")
    return 0
