"""A call's fate, decided once: run, ask, deny, preview, shown (dry run) or refused by the mode, with the sandbox
scope its process gets and what decided it. Pure: one function beside the policy (docs/ARCHITECTURE.md, "One tool
call"). TEPS lists a reply's calls with it and runs each call by it, so the list and the run cannot disagree.

The modes are a table: how much runs without asking. Dry run is a modifier of any mode (nothing lands unless the
user applies a preview), never a mode of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from framework_core.policy.levels import Level
from framework_core.tools.base import CallScope

if TYPE_CHECKING:
    from framework_core.core.approval import ApprovalAnswer
    from framework_core.policy.decide import Decision
    from framework_core.policy.kinds import ToolKind

Verb = Literal["run", "ask", "deny", "preview", "shown", "refused", "declined"]


@dataclass(frozen=True)
class Mode:
    name: str
    edits: bool = False  # a file write inside the workspace runs without asking (never a control path or credential)
    sandboxed: bool = False  # a command that would ask runs without asking when the sandbox is complete
    read_only: bool = False  # only what reads runs (plan)
    note: str = ""  # what the model is told when the user switches to it


MODES: dict[str, Mode] = {m.name: m for m in (
    Mode("ask", note="the user switched to ask mode: anything that changes something asks the user first."),
    Mode("accept-edits", edits=True,
         note="the user switched to accept-edits mode: file writes inside the workspace run without asking; "
              "commands still ask."),
    Mode("plan", read_only=True,
         note="the user switched to plan mode: nothing that changes anything runs now (reading files and read-only "
              "commands do). Investigate, then propose a plan and wait for the user to leave plan mode."),
    Mode("auto", edits=True, sandboxed=True,
         note="the user switched to auto mode: file writes inside the workspace, and commands that need no network "
              "and are not dangerous, run without asking inside the sandbox (each can be undone); commands that "
              "need the network, leave the sandbox or are dangerous, MCP tools and writes to control paths still "
              "ask."),
)}
CYCLE = ("ask", "accept-edits", "plan", "auto")  # Shift-Tab's order; auto is the last step, never one press away


@dataclass(frozen=True)
class CallFeatures:
    """What fate needs to know of a call besides the policy's decision."""

    kind: "ToolKind"
    runs_process: bool = False  # bash and declared CLI tools: runs in the sandbox
    network: bool = False  # a declared tool that says it needs the network
    inside_workspace: bool = True
    control: str | None = None  # a write to a control path: what it can do
    implicit: str | None = None  # a write of a file that runs with nothing named (auto mode asks): why


@dataclass(frozen=True)
class SandboxFacts:
    active: bool = True  # commands run confined
    overlay: bool = True  # commands that write run in an overlay (preview, undo)
    complete: bool = True  # Sandbox.is_complete(): what auto mode needs


@dataclass(frozen=True)
class Fate:
    verb: Verb
    scope: CallScope  # what the call's process may do when it runs (for "ask": when the answer is a plain yes)
    by: str  # what decided: the policy's rule or grant, the mode, dry run, the user's answer
    reason: str = ""  # said next to the call on screen
    asked: bool = False  # the user answered for this call
    bulk: bool = False  # asks, and may be approved with "yes to the remaining"
    auto: bool = False  # auto mode ran it: said on screen with its undo number

    @property
    def word(self) -> str:
        """What will happen to a call, in a word, for the list of a reply's calls."""
        if self.verb == "run" and self.by in ("accept-edits mode", "auto mode"):
            return "runs: " + self.by.removesuffix(" mode")
        return {"run": "runs", "ask": "asks", "deny": "blocked", "preview": "previewed", "shown": "shown",
                "refused": "not run: plan mode", "declined": "declined"}[self.verb]


NO_SCOPE = CallScope(writes=False)


def decide_fate(decision: "Decision", call: CallFeatures, box: SandboxFacts, mode: str, *, dry_run: bool = False,
                approved_rest: bool = False) -> Fate:
    """The fate of one call before anyone is asked. `approved_rest`: the user said yes to the remaining calls of
    this reply. Order: the policy's deny, the mode's refusal, dry run, what runs by itself, then what asks."""
    m = MODES[mode]
    d = decision
    if d.action == "deny":
        return Fate("deny", NO_SCOPE, ", ".join(d.matched) or "policy", "; ".join(d.reasons) or "denied by policy")
    unconfined = call.kind == "bash" and d.level > Level.SAFE and not box.active  # rules and grants assumed one
    allowed = d.action == "allow" and not unconfined
    if m.read_only and not (allowed and (call.kind == "read" or d.level == Level.SAFE)):
        return Fate("refused", NO_SCOPE, "plan mode")
    if dry_run and call.runs_process and box.overlay and d.level < Level.DANGEROUS:
        return Fate("preview", scope_of(d, call, preview=True), "dry run",
                    "dry run: a preview in the sandbox's overlay; nothing lands unless you apply it")
    if dry_run and not (allowed and call.kind == "read"):
        return Fate("shown", NO_SCOPE, "dry run", "dry run: shown, not run")
    scope = scope_of(d, call)
    if m.sandboxed:  # auto mode: what runs with nothing named waits for a person, whatever let the call run
        scope = replace(scope, hold=True)
    if allowed:
        return Fate("run", scope, ", ".join(d.matched) or "policy", "; ".join(d.matched or d.reasons))
    if m.edits and _edit(d, call) and m.sandboxed and call.implicit:
        return Fate("ask", scope, "auto mode", f"auto mode asks: this file runs with nothing named ({call.implicit})",
                    bulk=True)
    if m.edits and _edit(d, call):
        return Fate("run", scope, f"{m.name} mode", f"{m.name} mode: a file edit inside the workspace",
                    auto=m.sandboxed)
    if m.sandboxed and _sandboxed(d, call, box):
        return Fate("run", scope, "auto mode", "auto · sandboxed", auto=True)
    bulk = (d.level < Level.DANGEROUS and not unconfined
            and not (call.kind in ("read", "write") and not d.grant_options))  # control paths, credentials
    if approved_rest and bulk:
        return Fate("run", scope, "you: yes to the remaining calls", "you approved the remaining calls of this reply")
    return Fate("ask", scope, "policy", "; ".join(d.reasons), bulk=bulk)


def answered(fate: Fate, answer: "ApprovalAnswer") -> Fate:
    """The fate once the user answered a call that asked: declined, or run with the scope the answer gives (the
    overlay preview, the network for this call, or outside the sandbox, each for this call only)."""
    if answer.choice == "deny":
        return replace(fate, verb="declined", scope=NO_SCOPE, by="you: no", asked=True)
    preview = answer.preview
    scope = CallScope(writes=fate.scope.writes or preview, network=(fate.scope.network or answer.network)
                      and not preview, unsandboxed=answer.unsandboxed and not preview, preview=preview)
    by = {"session": "you: always, this session", "once": "you: yes"}[answer.choice]
    if answer.network:
        by += ", with network"
    return replace(fate, verb="run", scope=scope, by=by, reason="", asked=True)


def scope_of(d: "Decision", call: CallFeatures, *, preview: bool = False) -> CallScope:
    """What a call's process may do: write only when not merely Safe; the network only when the policy says it is
    needed (or a declared tool says so), never for a Safe command."""
    safe_bash = call.kind == "bash" and d.level == Level.SAFE
    network = (call.network or d.network) and not safe_bash
    return CallScope(writes=not safe_bash or preview, network=network and not preview, preview=preview)


def can_preview(d: "Decision", call: CallFeatures, box: SandboxFacts) -> bool:
    """A call can run as a preview when it is a process in the overlay that the policy does not block."""
    return call.runs_process and box.overlay and d.action != "deny" and d.level < Level.DANGEROUS


def _edit(d: "Decision", call: CallFeatures) -> bool:
    """A file write inside the workspace that asks and could be granted: not a control path, not a credential."""
    return (call.kind == "write" and call.inside_workspace and d.action == "ask" and bool(d.grant_options)
            and call.control is None)


def _sandboxed(d: "Decision", call: CallFeatures, box: SandboxFacts) -> bool:
    """Auto mode: a command in a complete sandbox that needs nothing it withholds (no network) and is not
    Dangerous. MCP tools are not processes LACA confines: they still ask unless granted."""
    return (d.action == "ask" and call.runs_process and box.complete and d.level < Level.DANGEROUS
            and not (d.network or call.network))
