"""The one entry point TEPS calls: decide(facts, state) -> allow | ask | deny, with reasons. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from framework_core.policy.classifier import analyse, classify_command
from framework_core.policy.git_config_runs import configured_problem
from framework_core.policy.grants import SessionGrants, grant_options_for
from framework_core.policy.kinds import GrantOption, Permission, ToolKind
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import is_credential_path
from framework_core.policy.rules import RuleSet

Action = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class CallFacts:
    tool_name: str
    kind: ToolKind
    source: str = "builtin"
    permission: Permission | None = None
    command: str | None = None
    path: str | None = None
    inside_workspace: bool = True
    home: str = ""
    control: str | None = None  # what a change to this control path can do (a write tool's target)
    saved_output: bool = False  # the path is one of this session's saved outputs (cut command or tool output)
    #: keys of the workspace repository's git config with which reading commands run a program (core.fsmonitor,
    #: diff.<driver>.textconv …), read by the caller; `git status` and `git diff` ask when there are any
    git_runs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    action: Action
    level: Level
    reasons: tuple[str, ...]
    matched: tuple[str, ...] = ()
    grant_options: tuple[GrantOption, ...] = ()
    network: bool = False  # the command needs the network (the sandbox gives it only when this is set)


@dataclass
class PolicyState:
    rules: RuleSet = field(default_factory=RuleSet)
    grants: SessionGrants = field(default_factory=SessionGrants)
    allow_dangerous: bool = False


def decide(facts: CallFacts, state: PolicyState) -> Decision:
    if facts.permission == "never":
        return Decision("deny", Level.NEEDS_CONFIRM, (f"tool {facts.tool_name} is disabled (permission: never)",))
    deny, allow = state.rules.match_tool(facts.tool_name)
    if deny is not None:
        return Decision("deny", Level.NEEDS_CONFIRM, (f"denied by {deny.label}",), (deny.label,))
    if facts.kind == "bash":
        return _bash(facts, state)
    if facts.kind in ("read", "write"):
        return _file(facts, state, allow.label if allow else None)
    return _generic(facts, state, allow.label if allow else None)


def strictest(decisions: list[Decision]) -> Decision:
    """One decision for a call judged part by part (a patch's files): deny over ask over allow, the highest level,
    every reason and match once; grant options only when every part that asks has one (none is a control path
    or a credential)."""
    rank = {"allow": 0, "ask": 1, "deny": 2}
    action = max((d.action for d in decisions), key=rank.__getitem__)
    asking = [d for d in decisions if d.action == "ask"]
    options = tuple(o for d in asking for o in d.grant_options) if all(d.grant_options for d in asking) else ()
    return Decision(action, max(d.level for d in decisions),
                    tuple(dict.fromkeys(r for d in decisions for r in d.reasons)),
                    tuple(dict.fromkeys(m for d in decisions for m in d.matched)) if action == "allow" else
                    tuple(dict.fromkeys(m for d in decisions if d.action == action for m in d.matched)),
                    options, any(d.network for d in decisions))


def _bash(facts: CallFacts, state: PolicyState) -> Decision:
    """Deny rules, then the Dangerous gate, then Safe; grants and allow rules only lift NeedsConfirm.
    Every decision says whether the command needs the network (the sandbox gives it nothing else)."""
    cmd = facts.command or ""
    verdict = classify_command(cmd)
    configured = configured_problem(analyse(cmd)[1], facts.git_runs) if verdict.level == Level.SAFE else ""
    if configured:
        verdict = Verdict(Level.NEEDS_CONFIRM, (configured,))
    net = verdict.network
    deny, allow = state.rules.match_command(cmd)
    if deny is not None:
        return Decision("deny", verdict.level, (f"denied by {deny.label}",) + verdict.reasons, (deny.label,),
                        network=net)
    if verdict.level == Level.DANGEROUS:
        return Decision("ask" if state.allow_dangerous else "deny", verdict.level, verdict.reasons, network=net)
    if verdict.level == Level.SAFE:
        return Decision("allow", verdict.level, verdict.reasons, ("read-only by construction",))
    grant = state.grants.match(facts, verdict)
    if grant is not None:
        n, g = grant
        return Decision("allow", verdict.level, verdict.reasons, (f"session grant #{n}: {g.label}",), network=net)
    if allow is not None:
        return Decision("allow", verdict.level, verdict.reasons, (allow.label,), network=net)
    return Decision("ask", verdict.level, verdict.reasons, (), tuple(grant_options_for(facts, verdict)), network=net)


def _file(facts: CallFacts, state: PolicyState, allow_label: str | None) -> Decision:
    """Reads inside the workspace run; outside they ask (exactly-this-file grants apply); credential paths ask
    every time. Writes ask unless granted or allowed; a control path asks every time and names the danger."""
    if facts.kind == "read" and facts.saved_output:  # LACA wrote it from output the model already had a part of
        return Decision("allow", Level.SAFE, ("reads a saved output of this session",),
                        ("a saved output of this session",))
    reasons: list[str] = []
    control = facts.control if facts.kind == "write" else None
    if control:
        reasons.append(f"changes a control path: {control}")
    cred = is_credential_path(facts.path or "", facts.home) if facts.path else None
    if cred:
        reasons.append(cred)
    if not facts.inside_workspace:
        reasons.append(f"{'reads' if facts.kind == 'read' else 'writes'} outside the workspace: {facts.path}")
    verdict = Verdict(Level.NEEDS_CONFIRM, tuple(reasons))
    options = () if cred or control else tuple(grant_options_for(facts, verdict))
    if facts.kind == "read":
        if cred:
            return Decision("ask", Level.NEEDS_CONFIRM, tuple(reasons))
        if facts.inside_workspace:
            return Decision("allow", Level.SAFE, ("reading a workspace file",), ("reads inside the workspace",))
        grant = state.grants.match(facts, verdict)
        if grant is not None:
            return Decision("allow", Level.NEEDS_CONFIRM, tuple(reasons),
                            (f"session grant #{grant[0]}: {grant[1].label}",))
        return Decision("ask", Level.NEEDS_CONFIRM, tuple(reasons), (), options)
    if control or cred:
        return Decision("ask", Level.NEEDS_CONFIRM, tuple(reasons))
    grant = state.grants.match(facts, verdict)
    if grant is not None:
        return Decision("allow", Level.NEEDS_CONFIRM, tuple(reasons) or ("writes a file",),
                        (f"session grant #{grant[0]}: {grant[1].label}",))
    if allow_label and facts.inside_workspace:
        return Decision("allow", Level.NEEDS_CONFIRM, ("writes a file",), (allow_label,))
    return Decision("ask", Level.NEEDS_CONFIRM, tuple(reasons) or ("writes a file",), (), options)


def _generic(facts: CallFacts, state: PolicyState, allow_label: str | None) -> Decision:
    where = f" on server {facts.source.split(':', 1)[1]}" if facts.source.startswith("mcp:") else ""
    if facts.permission == "always":
        return Decision("allow", Level.NEEDS_CONFIRM, (f"{facts.tool_name}{where} is configured 'always'",),
                        ("configured permission: always",))
    grant = state.grants.match(facts, None)
    if grant is not None:
        return Decision("allow", Level.NEEDS_CONFIRM, (f"calls {facts.tool_name}{where}",),
                        (f"session grant #{grant[0]}: {grant[1].label}",))
    if allow_label:
        return Decision("allow", Level.NEEDS_CONFIRM, (f"calls {facts.tool_name}{where}",), (allow_label,))
    return Decision("ask", Level.NEEDS_CONFIRM, (f"calls {facts.tool_name}{where}; its permission is 'ask'",), (),
                    tuple(grant_options_for(facts, None)))
