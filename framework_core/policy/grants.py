"""Session grants: what `a` ("always, this session") remembers. Never wider than the request.

An exact grant covers that command only. A prefix grant (`git push origin …`) is offered only when the
words after the prefix are inert: plain workspace-relative names, no options, no paths outside the
workspace, nothing expanded at run time. A later command is covered only when its own remainder is inert
too, so `a` on `git log` does not cover `git log --output=~/.bashrc`. Programs that destroy data get exact
grants only, and so do shells, interpreters and wrappers (a prefix of `bash -c` would cover anything), and
commands that use the network (the words after `pip install` or `git push` decide what is fetched or sent).
"""

from __future__ import annotations

import re
import shlex
import threading
from typing import TYPE_CHECKING

from framework_core.policy.kinds import GrantOption, PolicyError
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.catalog import entry, has_trait
from framework_core.policy.paths import secret_reason

if TYPE_CHECKING:
    from framework_core.policy.decide import CallFacts

SIMPLE_COMMAND_CHARS = set("|&;<>()$`\\\n*?[]{}~!#")
INERT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._,%/-]*")


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


def inert(word: str) -> bool:
    """A word that cannot make a command execute, write outside the workspace or reach further:
    a workspace-relative name without options, `..`, expansions, URLs or credentials."""
    return bool(INERT.fullmatch(word)) and ".." not in word.split("/") and not secret_reason(word)


def prefix_allowed(toks: list[str]) -> bool:
    """May a prefix grant start with these words? Not for destructive programs or ones that run others."""
    if len(toks) < 2 or "/" in toks[0] or "=" in toks[0] or has_trait(toks[0], "exact-grants"):
        return False
    found = entry(toks[0])
    if found is not None and toks[1] in found.exact_after:  # git reset, git -C …
        return False
    return all(INERT.fullmatch(t) or t.startswith("-") and INERT.fullmatch(t[1:].lstrip("-")) for t in toks)


def covers(prefix: list[str], toks: list[str]) -> bool:
    return len(toks) >= len(prefix) and toks[: len(prefix)] == prefix and all(inert(t) for t in toks[len(prefix):])


def grant_options_for(facts: "CallFacts", verdict: Verdict | None) -> list[GrantOption]:
    if verdict is not None and verdict.level == Level.DANGEROUS:
        return []
    if facts.kind == "bash" and facts.command is not None:
        cmd = facts.command.strip()
        options = [GrantOption("exact_command", cmd, facts.tool_name, f"exactly this command: {cmd}")]
        toks = tokens(cmd)
        if toks and is_simple_command(cmd) and not (verdict is not None and verdict.network):
            for n in range(len(toks) - 1, 1, -1):
                if prefix_allowed(toks[:n]) and covers(toks[:n], toks):
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
        return bool(prefix and toks and prefix_allowed(prefix) and is_simple_command(cmd) and covers(prefix, toks)
                    and not (verdict is not None and verdict.network))
    return False


class SessionGrants:
    def __init__(self) -> None:
        self._grants: dict[int, GrantOption] = {}
        self._next = 1
        self._lock = threading.Lock()

    def add(self, option: GrantOption) -> int:
        if option.kind == "command_prefix" and not prefix_allowed(tokens(option.value) or []):
            raise PolicyError(f"a prefix grant for '{option.value}' would be too wide (a bare program, a program "
                            "that destroys data or runs others, or words that are not plain); grant the exact "
                            "command instead")
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
                raise PolicyError(f"no session grant #{n} (current: {valid})")
            return self._grants.pop(n)

    def list(self) -> list[tuple[int, GrantOption]]:
        with self._lock:
            return sorted(self._grants.items())

    def match(self, facts: "CallFacts", verdict: Verdict | None = None) -> tuple[int, GrantOption] | None:
        for n, grant in self.list():
            if grant_matches(grant, facts, verdict):
                return n, grant
        return None
