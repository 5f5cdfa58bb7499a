"""Session grants: what `a` ("always, this session") remembers. Never wider than the request."""

from __future__ import annotations

import shlex
import threading
from typing import TYPE_CHECKING

from framework_core.errors import LacaError
from framework_core.policy.kinds import GrantOption
from framework_core.policy.levels import Level, Verdict

if TYPE_CHECKING:
    from framework_core.policy.decide import CallFacts

SIMPLE_COMMAND_CHARS = set("|&;<>()$`\\\n*?[]{}~!#")


def is_simple_command(cmd: str) -> bool:
    """One plain command: no operators, substitutions, redirections or globs; quotes allowed."""
    stripped = cmd
    for q in ("'", '"'):
        stripped = stripped.replace(q, "")
    return not (set(stripped) & SIMPLE_COMMAND_CHARS)


def tokens(cmd: str) -> list[str] | None:
    try:
        return shlex.split(cmd)
    except ValueError:
        return None


def grant_options_for(facts: "CallFacts", verdict: Verdict | None) -> list[GrantOption]:
    if verdict is not None and verdict.level == Level.DANGEROUS:
        return []
    if facts.kind == "bash" and facts.command is not None:
        cmd = facts.command.strip()
        options = [GrantOption("exact_command", cmd, facts.tool_name, f"exactly this command: {cmd}")]
        toks = tokens(cmd)
        if toks and is_simple_command(cmd):
            for n in range(len(toks) - 1, 1, -1):
                prefix = shlex.join(toks[:n])
                options.append(GrantOption("command_prefix", prefix, facts.tool_name,
                                           f"commands starting with: {prefix} …"))
        return options
    if facts.kind == "write" and facts.path:
        return [GrantOption("path", facts.path, facts.tool_name, f"writes to exactly this file: {facts.path}")]
    if facts.kind == "read" and facts.path:
        return [GrantOption("path", facts.path, facts.tool_name, f"reads of exactly this file: {facts.path}")]
    return [GrantOption("tool", facts.tool_name, facts.tool_name, f"every call of the tool {facts.tool_name}")]


def grant_matches(grant: GrantOption, facts: "CallFacts", verdict: Verdict | None) -> bool:
    if grant.tool_name != facts.tool_name:
        return False
    if verdict is not None and verdict.level == Level.DANGEROUS:
        return False
    if grant.kind == "tool":
        return True
    if grant.kind == "path":
        return facts.path == grant.value
    if facts.command is None:
        return False
    cmd = facts.command.strip()
    if grant.kind == "exact_command":
        return cmd == grant.value
    if grant.kind == "command_prefix":
        prefix, toks = tokens(grant.value), tokens(cmd)
        return bool(prefix and toks and len(prefix) >= 2 and is_simple_command(cmd) and toks[: len(prefix)] == prefix)
    return False


class SessionGrants:
    def __init__(self) -> None:
        self._grants: dict[int, GrantOption] = {}
        self._next = 1
        self._lock = threading.Lock()

    def add(self, option: GrantOption) -> int:
        if option.kind == "command_prefix" and len(tokens(option.value) or []) < 2:
            raise LacaError("a prefix grant needs at least two words; a bare program name is too wide")
        with self._lock:
            for n, existing in self._grants.items():
                if existing == option:
                    return n
            n = self._next
            self._grants[n] = option
            self._next += 1
            return n

    def revoke(self, n: int) -> GrantOption:
        with self._lock:
            if n not in self._grants:
                valid = ", ".join(map(str, self._grants)) or "none"
                raise LacaError(f"no session grant #{n} (current: {valid})")
            return self._grants.pop(n)

    def list(self) -> list[tuple[int, GrantOption]]:
        with self._lock:
            return sorted(self._grants.items())

    def match(self, facts: "CallFacts", verdict: Verdict | None = None) -> tuple[int, GrantOption] | None:
        for n, grant in self.list():
            if grant_matches(grant, facts, verdict):
                return n, grant
        return None
