"""Approval wraps execution: TEPS builds an `ApprovalRequest`, an `Approver` answers it.

The terminal approver lives in the UI; one-shot mode declines; tests use `ScriptedApprover`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Literal, Protocol

from framework_core.lial_core import ToolRequest
from framework_core.policy.kinds import GrantOption
from framework_core.policy.levels import Level
from framework_core.tools.base import ActionPreview
from framework_core.wording import STOPPED, STOPPED_HERE  # noqa: F401 - the results of a stopped turn

Choice = Literal["once", "session", "deny"]

MCP_WARNING = ("Malicious MCP servers or conversation content could try to trick LACA into harmful actions "
               "through your installed tools. Review each action carefully before approving.")

# What the model reads when the user stops the turn with Esc at a question (the call asked about, then each later one)


@dataclass
class ApprovalRequest:
    request: ToolRequest
    preview: ActionPreview
    level: Level
    reasons: list[str]
    source: str  # "builtin", "declared:…", "mcp:<server>"
    index: int = 1
    total: int = 1
    grant_options: list[GrantOption] = field(default_factory=list)  # empty: no `a`
    default: Choice | None = None  # Dangerous: "deny"
    warning: str | None = None
    server: str | None = None
    sandbox_note: str | None = None  # what the sandbox allows this call, shown before the answer
    sandbox_warn: bool = False  # the note deserves attention (network given, or no sandbox at all)
    can_unsandbox: bool = False  # offer the explicit, red "run outside the sandbox once" choice
    can_network: bool = False  # offer "yes, with network" (a command the policy judged local; this call only)
    control_note: str | None = None  # a write to a control path: what it can do, shown in red
    can_preview: bool = False  # offer "run in the overlay, show the changes, then ask to apply"
    remaining: int = 0  # later calls of this reply that would ask too (none Dangerous): offer "yes to them all"

    @property
    def allow_session(self) -> bool:
        return bool(self.grant_options) and self.level < Level.DANGEROUS


@dataclass
class ApprovalAnswer:
    choice: Choice
    reason: str = ""  # the user's words on `n`, passed back to the model
    grant: GrantOption | None = None  # which option `a` saved
    unsandboxed: bool = False  # the user chose to run this one call outside the sandbox (never remembered)
    network: bool = False  # "yes, with network": this one call runs sandboxed with the network (never remembered)
    preview: bool = False  # run in the overlay and show the change set before applying it
    remaining: bool = False  # also approve, once each, the later calls of this reply that would ask
    stop: bool = False  # Esc: decline this call and every remaining call of the turn; the turn ends (choice "deny")


class Approver(Protocol):
    def approve(self, req: ApprovalRequest) -> ApprovalAnswer: ...

    def review_changes(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        """A previewed command's change set: True applies it to the workspace."""
        ...

    def review_held(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        """A change set auto mode held (it holds files that run with nothing named): True applies it."""
        ...


class DeclineAllApprover:
    """One-shot mode: anything that needs approval is declined; `declined` records what, for stderr."""

    def __init__(self) -> None:
        self.declined: list[ApprovalRequest] = []
        self.previewed: list[tuple[ApprovalRequest, str]] = []  # dry run: change sets shown, never applied

    def approve(self, req: ApprovalRequest) -> ApprovalAnswer:
        self.declined.append(req)
        return ApprovalAnswer("deny", reason="non-interactive mode: approval needed but no one to ask")

    def review_changes(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        self.previewed.append((req, summary))
        return False

    def review_held(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        self.declined.append(req)  # it needed a person's answer: one-shot mode exits 3
        return False


class ScriptedApprover:
    """Answers from a queue of 'y' / 'n' / 'a' / 'w' / 'esc' (or ApprovalAnswer); records every request it saw."""

    def __init__(self, answers: Iterable[str | ApprovalAnswer] = ()) -> None:
        self._answers: deque[str | ApprovalAnswer] = deque(answers)
        self.seen: list[ApprovalRequest] = []
        self.reviewed: list[tuple[str, str]] = []

    def push(self, *answers: str | ApprovalAnswer) -> None:
        self._answers.extend(answers)

    def approve(self, req: ApprovalRequest) -> ApprovalAnswer:
        self.seen.append(req)
        if not self._answers:
            raise AssertionError(f"ScriptedApprover: no answer left for {req.request.tool_name}")
        ans = self._answers.popleft()
        if isinstance(ans, ApprovalAnswer):
            return ans
        if ans == "a" and req.allow_session:
            return ApprovalAnswer("session", grant=req.grant_options[0])
        if ans == "esc":
            return ApprovalAnswer("deny", stop=True)
        if ans == "w":
            if not req.can_network:
                raise AssertionError(f"ScriptedApprover: 'w' was not offered for {req.request.tool_name}")
            return ApprovalAnswer("once", network=True)
        choices: dict[str, Choice] = {"y": "once", "n": "deny", "a": "once"}
        return ApprovalAnswer(choices[ans])

    def review_changes(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        """Takes the next answer too: 'y' applies, anything else discards."""
        self.reviewed.append((summary, diff))
        if not self._answers:
            raise AssertionError(f"ScriptedApprover: no answer left to review {summary}")
        return self._answers.popleft() == "y"

    def review_held(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        """A held change set takes the next answer the same way."""
        return self.review_changes(req, summary, diff)
