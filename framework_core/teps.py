"""TEPS: Tool Execution & Permission Service.

`TEPSEngine.execute_tool(request dict) -> result dict` (typed: `execute`, `execute_batch`): ask the policy, show
ICERC and ask the user through an `Approver` when needed, run the handler, return the result (the stable formats:
docs/ARCHITECTURE.md).
TEPS executes; it does not render: everything the user sees goes out as events.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from framework_core.core.approval import MCP_WARNING, ApprovalAnswer, ApprovalRequest, Approver, DeclineAllApprover
from framework_core.config.models import TepsSettings
from framework_core.errors import ToolArgumentError, ToolError
from framework_core.core.events import EventSink, Notice, ToolCallFinished, ToolCallStarted, ToolOutputChunk, discard
from framework_core.lial_core import ToolRequest, ToolResult, ToolStatus
from framework_core.policy.decide import CallFacts, Decision, PolicyState, decide
from framework_core.policy.levels import Level
from framework_core.tools.base import ActionPreview, CallScope, ToolContext, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from framework_core.policy.kinds import GrantOption
    from framework_core.sandbox.changeset import ChangeSet
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.sandbox.undo_store import UndoStore

AuditSink = Callable[[dict[str, Any]], None]
INTERRUPTED = "interrupted by the user (Ctrl-C) before this call finished"
MODES = ("ask", "accept-edits", "plan")  # how much runs without asking; the REPL cycles them with Shift-Tab
PLAN_DECLINED = ("Not run: the user has LACA in plan mode, where nothing that changes anything runs (reading files "
                 "and read-only commands do). Describe the plan instead; the user leaves plan mode to carry it out.")


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a batch; `results` answers every call of the batch, in order."""

    def __init__(self, results: list[ToolResult]) -> None:
        super().__init__("interrupted")
        self.results = results


@dataclass
class _Prepared:
    request: ToolRequest
    spec: ToolSpec | None = None
    preview: ActionPreview | None = None
    decision: Decision | None = None
    early: ToolResult | None = None  # a result decided before running (unknown tool, bad arguments)
    answer: ApprovalAnswer | None = None
    notes: list[str] = field(default_factory=list)


class TEPSEngine:
    """Executes tool requests under the permission policy. One engine per session."""

    def __init__(self, config: TepsSettings | dict[str, Any] | None = None, *, registry: ToolRegistry | None = None,
                 workspace: Path | None = None, approver: Approver | None = None,
                 policy: PolicyState | None = None, events: EventSink = discard, audit: AuditSink | None = None,
                 env: dict[str, str] | None = None, sandbox: "Sandbox | None" = None,
                 undo: "UndoStore | None" = None) -> None:
        from framework_core.tools.builtin import builtin_registry
        from framework_core.tools.envscrub import scrub_env

        self.settings = config if isinstance(config, TepsSettings) else TepsSettings(**(config or {}))
        self.workspace = (workspace or Path.cwd()).resolve()
        self.registry = registry if registry is not None else builtin_registry()
        self.approver: Approver = approver or DeclineAllApprover()
        if policy is None:  # built from a config dict alone: the allowlist and rule files it names
            from framework_core.config.rule_files import load_policy, settings_rule_files

            policy = load_policy(settings_rule_files(self.settings))
        self.policy = policy
        self.events = events
        self.audit = audit or (lambda record: None)
        self.dry_run = self.settings.dry_run_enabled
        self.mode = "ask"  # one of MODES
        self._bulk_after: list[int] = []  # per call of the current reply: later calls approvable together
        self._approve_rest = False  # the user said yes to the remaining calls of this reply
        self._running_since: float | None = None  # when the call now running started (Ctrl-C reports it)
        clean, withheld = scrub_env(os.environ if env is None else env, self.settings.keep_env)
        if sandbox is None:
            from framework_core.sandbox.sandbox import Sandbox

            sandbox = Sandbox("workspace-write", self.workspace)
        if undo is None:  # built without a session (TEPSEngine(config) alone): undo for this process
            import tempfile

            from framework_core.sandbox.undo_store import UndoStore

            undo = UndoStore(tempfile.mkdtemp(prefix="laca-undo-"), 200 * 1024 * 1024)
        self.sandbox = sandbox
        self.undo = undo
        self.context = ToolContext(workspace=self.workspace, settings=self.settings, env=clean,
                                   undo=undo, withheld_env=withheld, sandbox=sandbox)

    # ---- the stable entry point (docs/ARCHITECTURE.md) --------------------------------------

    def execute_tool(self, tool_request: dict[str, Any]) -> dict[str, Any]:
        """Run one request given as the stable dict (`request_id`, `tool_name`, `parameters`, `icerc_full_text`);
        the result is the stable dict (`request_id`, `tool_name`, `status`, `data`)."""
        return self.execute(ToolRequest.from_dict(tool_request)).to_dict()

    def execute(self, request: ToolRequest) -> ToolResult:
        """Run one typed request (a reply with several calls goes through `execute_batch`)."""
        return self.execute_batch([request])[0]

    def execute_batch(self, requests: list[ToolRequest],
                      on_result: Callable[[ToolResult], None] | None = None) -> list[ToolResult]:
        """Decide and run several calls of one reply, in order; every call gets exactly one result.

        `on_result` receives each result as its call finishes (the session journals it at once, so a crash
        mid-batch loses no finished result). Ctrl-C (KeyboardInterrupt) at a prompt or while a tool runs
        answers the current and all remaining calls as interrupted, then re-raises so the turn ends with a
        valid history.
        """
        results: list[ToolResult] = []
        total = len(requests)
        keep = on_result or (lambda result: None)
        self._bulk_after, self._approve_rest = (self._plan(requests) if total > 1 else []), False
        try:
            for index, req in enumerate(requests, start=1):
                results.append(self._run_one(req, index, total))
                keep(results[-1])
        except KeyboardInterrupt:
            for req in requests[len(results):]:  # the call that was running keeps the time it ran
                ran = time.monotonic() - self._running_since if self._running_since is not None else 0.0
                self._running_since = None
                results.append(self._finish(_Prepared(req), self._interrupted(req), ran))
                keep(results[-1])
            raise BatchInterrupted(results) from None
        return results

    def _plan(self, requests: list[ToolRequest]) -> list[int]:
        """List a reply's calls up front when some will ask or are blocked; returns, for each call, how many
        later ones would ask and may be approved together ("yes to the remaining N", never Dangerous ones)."""
        preps = [self._prepare(req) for req in requests]
        words = []
        for n, prep in enumerate(preps, start=1):
            what = self._plan_word(prep)
            title = prep.preview.title if prep.preview else prep.request.tool_name
            body = " ".join((prep.preview.body if prep.preview and prep.preview.lexer == "bash" else "").split())
            words.append((what, f"  {n}. {title}{': ' + body[:70] + ('…' if len(body) > 70 else '') if body else ''}"
                                f"  ({what})"))
        if any(w in ("asks", "blocked") for w, _ in words):
            self.events(Notice("info", f"This reply has {len(requests)} calls, decided in turn:\n"
                                       + "\n".join(line for _, line in words)))
        bulk = [self._bulk_ok(p) for p in preps]
        return [sum(bulk[i + 1:]) for i in range(len(preps))]

    def _plan_word(self, prep: _Prepared) -> str:
        """What will happen to a call, in a word, for the list of a reply's calls."""
        d = prep.decision
        if d is None or prep.spec is None:
            return "not valid"
        if d.action == "deny":
            return "blocked"
        runs = d.action == "allow" and not self._needs_sandbox(prep)
        if self.dry_run:
            return "previewed" if self._can_preview(prep) else "runs" if runs and prep.spec.kind == "read" else "shown"
        if self.mode == "plan" and not (runs and (prep.spec.kind == "read" or d.level == Level.SAFE)):
            return "not run: plan mode"
        if self.mode == "accept-edits" and not runs and self._edit_ok(prep):
            return "runs: accept-edits"
        return "runs" if runs else "asks"

    def _bulk_ok(self, prep: _Prepared) -> bool:
        """A call that asks and may be approved with others: not Dangerous, not a control path or a
        credential, and not a command asking only because there is no sandbox."""
        d = prep.decision
        if d is None or prep.spec is None or d.action != "ask" or d.level >= Level.DANGEROUS:
            return False
        if prep.spec.kind in ("read", "write") and not d.grant_options:
            return False  # control paths and credential files are asked about every time
        return not self._needs_sandbox(prep)

    # ---- steps -----------------------------------------------------------------------------

    def _run_one(self, req: ToolRequest, index: int, total: int) -> ToolResult:
        prep = self._prepare(req)
        if prep.early is not None:
            return self._finish(prep, prep.early, 0.0)
        assert prep.spec and prep.preview and prep.decision
        decision = prep.decision
        if decision.action == "deny":  # shown once, by the finished call
            why = "; ".join(decision.reasons) or "denied by policy"
            hint = (" Dangerous commands run only after the user turns on /allow-dangerous."
                    if decision.level == Level.DANGEROUS else "")
            return self._finish(prep, self._result(req, "blocked_by_policy", message=f"Blocked by policy: {why}.{hint}",
                                                   reasons=list(decision.reasons)), 0.0)
        previewing = self.dry_run and self._can_preview(prep)
        auto = (decision.action == "allow" and not self._needs_sandbox(prep)) or previewing
        if self.mode == "plan" and not (auto and (prep.spec.kind == "read" or decision.level == Level.SAFE)):
            return self._finish(prep, self._result(req, "declined_by_user", message=PLAN_DECLINED, mode="plan",
                                                   would_run=prep.preview.body if prep.preview.lexer == "bash"
                                                   else prep.preview.title), 0.0)
        edit = self.mode == "accept-edits" and not auto and self._edit_ok(prep)
        auto = auto or edit
        if self.dry_run and not previewing and not (auto and prep.spec.kind == "read"):
            return self._dry_run(prep)  # shown, never asked about: it will not run
        bulk = not auto and self._approve_rest and self._bulk_ok(prep)
        if not auto and not bulk:
            prep.answer = self._ask(prep, index, total)
            if prep.answer.choice == "deny":
                msg = "User declined execution."
                data: dict[str, Any] = {"message": msg}
                if prep.answer.reason:
                    data["user_reason"] = prep.answer.reason
                return self._finish(prep, self._result(req, "declined_by_user", **data), 0.0)
            if prep.answer.choice == "session" and prep.answer.grant is not None:
                self._remember(prep.answer.grant)
            self._approve_rest = self._approve_rest or prep.answer.remaining
        reason = "; ".join(decision.matched or decision.reasons) if auto else ""
        if edit:
            reason = "accept-edits mode: a file edit inside the workspace"
        if bulk:
            prep.answer, reason = ApprovalAnswer("once"), "you approved the remaining calls of this reply"
        if previewing:
            reason = "dry run: a preview in the sandbox's overlay; nothing lands unless you apply it"
        self.events(ToolCallStarted(req, prep.preview.title, prep.preview.body, auto or bulk, reason))
        self.context.scope = self._scope(prep, preview=previewing or bool(prep.answer and prep.answer.preview))
        return self._execute(prep)

    def _edit_ok(self, prep: _Prepared) -> bool:
        """accept-edits mode: a file write inside the workspace runs without asking, unless it is a control path
        or a credential file (those ask every time, as they offer no grant)."""
        assert prep.spec and prep.preview and prep.decision
        return (prep.spec.kind == "write" and prep.preview.inside_workspace and prep.decision.action == "ask"
                and bool(prep.decision.grant_options) and self._control(prep.spec, prep.preview) is None)

    def _dry_run(self, prep: _Prepared) -> ToolResult:
        """Dry run, for a call that cannot run in the overlay: show what it would do, run nothing."""
        assert prep.preview
        self.events(ToolCallStarted(prep.request, prep.preview.title, prep.preview.body, True,
                                    "dry run: shown, not run"))
        return self._finish(prep, self._result(
            prep.request, "dry_run", message="Dry run: not run (only commands can be previewed in the sandbox's "
            "overlay; this call would change things directly).", would_run=prep.preview.body or prep.preview.title),
            0.0)

    def _can_preview(self, prep: _Prepared) -> bool:
        """A call can run as a preview when it is a process in the overlay that the policy does not block."""
        assert prep.spec and prep.decision
        return (prep.spec.runs_process and self.sandbox.overlay and prep.decision.action != "deny"
                and prep.decision.level < Level.DANGEROUS)

    def _prepare(self, req: ToolRequest) -> _Prepared:
        prep = _Prepared(req)
        spec = self.registry.get(req.tool_name)
        if spec is None:
            names = ", ".join(sorted(t.name for t in self.registry.all()))
            prep.early = self._result(req, "error",
                                      error_message=f"Unknown tool '{req.tool_name}'. Available tools: {names}")
            return prep
        prep.spec = spec
        if req.parse_error:
            prep.early = self._result(req, "error", error_message=f"{req.parse_error}. Send the arguments again "
                                                                  "as a JSON object.")
            return prep
        if spec.permission == "never":
            prep.early = self._result(req, "blocked_by_policy",
                                      message=f"Tool '{spec.name}' is disabled by configuration (permission: never).")
            return prep
        try:
            spec.check_arguments(req.parameters)  # against the schema the model sees: nothing is asked or run
            prep.preview = spec.make_preview(req.parameters, self.context)
        except ToolArgumentError as exc:
            prep.early = self._result(req, "error", error_message=f"Invalid arguments: {exc}")
            return prep
        except Exception as exc:  # a broken previewer must not crash the session
            prep.early = self._result(req, "error", error_message=f"Could not prepare {spec.name}: {exc}")
            return prep
        prep.decision = decide(self._facts(spec, req, prep.preview), self.policy)
        return prep

    def _facts(self, spec: ToolSpec, req: ToolRequest, preview: ActionPreview) -> CallFacts:
        command = req.parameters.get("command") if spec.kind == "bash" else None
        return CallFacts(tool_name=spec.name, kind=spec.kind, source=spec.source, permission=spec.permission,
                         command=str(command) if command is not None else None, path=preview.path,
                         inside_workspace=preview.inside_workspace, saved_output=preview.saved_output,
                         home=str(Path.home()),
                         control=self._control(spec, preview))

    def _control(self, spec: ToolSpec, preview: ActionPreview) -> str | None:
        """What a write to a control path can do (git hooks, .mcp.json, rule files, ...), or None."""
        if spec.kind != "write" or not preview.path:
            return None
        from framework_core.sandbox.control import control_reason

        return control_reason(Path(preview.path), self.workspace, self.sandbox.protected_extra)

    def _needs_sandbox(self, prep: _Prepared) -> bool:
        """With no sandbox in force, a command that is not Safe always asks: rules and grants assumed one."""
        assert prep.spec and prep.decision
        return (prep.spec.kind == "bash" and prep.decision.level > Level.SAFE
                and not self.sandbox.active)

    def _scope(self, prep: _Prepared, *, preview: bool = False) -> CallScope:
        """What this call's process may do: write only when not merely Safe; the network only when the policy
        says it is needed and the call was approved or allowed by a rule or grant (never for Safe commands)."""
        assert prep.spec and prep.decision
        spec, decision = prep.spec, prep.decision
        safe_bash = spec.kind == "bash" and decision.level == Level.SAFE
        network = (spec.network or bool(getattr(decision, "network", False))) and not safe_bash
        return CallScope(writes=not safe_bash or preview, network=network and not preview,
                         unsandboxed=bool(prep.answer and prep.answer.unsandboxed) and not preview, preview=preview)

    def sandbox_note(self, prep: _Prepared) -> tuple[str, bool]:
        """(what the sandbox will allow this call, whether that deserves a warning) for the approval panel."""
        assert prep.spec and prep.decision
        if not self.sandbox.active:
            return ("NO SANDBOX: this runs with your own permissions (" + self.sandbox.describe() + ")", True)
        scope = self._scope(prep)
        if self.sandbox.profile == "read-only":
            where = "the read-only sandbox: it cannot change any file"
        else:
            where = ("the sandbox: the workspace is writable" + (" (changes can be undone)" if self.sandbox.overlay
                                                                else "") + ", everything else read-only")
        net = ("NETWORK ALLOWED (the policy says it uses the network; what it sends cannot be undone)"
               if scope.network else "no network")
        return (f"Runs in {where}; {net}; credentials hidden.", scope.network)

    def _remember(self, grant: "GrantOption") -> None:
        """`a`: keep the grant for the session; one the policy refuses (too wide) is said, and the call runs once."""
        from framework_core.policy.kinds import PolicyError

        try:
            self.policy.grants.add(grant)
        except PolicyError as exc:
            self.events(Notice("warning", f"Not remembered: {exc}. This call runs once."))

    def _ask(self, prep: _Prepared, index: int, total: int) -> ApprovalAnswer:
        assert prep.spec and prep.preview and prep.decision
        dangerous = prep.decision.level == Level.DANGEROUS
        req = ApprovalRequest(
            request=prep.request, preview=prep.preview, level=prep.decision.level,
            reasons=list(prep.decision.reasons), source=prep.spec.source, index=index, total=total,
            grant_options=[] if dangerous else list(prep.decision.grant_options),
            default="deny" if dangerous else None,
            warning=MCP_WARNING if prep.spec.server else None, server=prep.spec.server)
        control = self._control(prep.spec, prep.preview)
        if control:
            req.control_note = (f"This file is a control path: {control}. Check the change below; "
                                "this is asked every time and never remembered.")
        if 0 < index <= len(self._bulk_after) and not dangerous and self._bulk_ok(prep):
            req.remaining = self._bulk_after[index - 1]
        if prep.spec.runs_process:
            req.sandbox_note, req.sandbox_warn = self.sandbox_note(prep)
            req.can_unsandbox = self.sandbox.active and self.sandbox.profile != "off"
            req.can_preview = self._can_preview(prep)
        answer = self.approver.approve(req)
        if dangerous and answer.choice == "session":
            answer = ApprovalAnswer("once")  # never remember a Dangerous approval
        return answer

    def _execute(self, prep: _Prepared) -> ToolResult:
        assert prep.spec
        req, spec = prep.request, prep.spec
        ctx = self.context
        ctx.on_output = lambda text: self.events(ToolOutputChunk(req.request_id, text))
        ctx.review = (lambda cs: self._review(prep, cs)) if ctx.scope.preview else None
        self.audit({"type": "tool_started", "request_id": req.request_id, "tool_name": req.tool_name})
        start = self._running_since = time.monotonic()
        try:
            data = spec.handler(dict(req.parameters), ctx)
            code = data.get("exit_code")
            if isinstance(code, int) and code != 0:  # a failed command failed
                result = self._result(req, "error", error_message=f"the command exited with status {code}", **data)
            else:
                result = self._result(req, "success", **data)
        except ToolArgumentError as exc:
            result = self._result(req, "error", error_message=f"Invalid arguments: {exc}")
        except ToolError as exc:
            extra = {**exc.data, **({"details": exc.details} if exc.details else {})}
            result = self._result(req, "error", error_message=str(exc), **extra)
        except Exception as exc:  # a handler bug becomes a result the model can read, not a crash
            result = self._result(req, "error", error_message=f"{type(exc).__name__}: {exc}")
        finally:
            ctx.on_output = ctx.review = None
        self._running_since = None
        return self._finish(prep, result, time.monotonic() - start)

    def _review(self, prep: _Prepared, changes: "ChangeSet") -> bool:
        """Show a previewed change set and ask whether to apply it (an approver that cannot ask says no)."""
        review = getattr(self.approver, "review_changes", None)
        if review is None:
            return False
        assert prep.spec and prep.preview and prep.decision
        req = ApprovalRequest(request=prep.request, preview=prep.preview, level=prep.decision.level,
                              reasons=list(prep.decision.reasons), source=prep.spec.source)
        return bool(review(req, changes.summary(), changes.diff()))

    # ---- results ---------------------------------------------------------------------------

    @staticmethod
    def _result(req: ToolRequest, result_status: ToolStatus, /, **data: Any) -> ToolResult:
        return ToolResult(req.request_id, req.tool_name, result_status, data)

    def _interrupted(self, req: ToolRequest) -> ToolResult:
        return self._result(req, "declined_by_user", message=INTERRUPTED)

    def _finish(self, prep: _Prepared, result: ToolResult, duration: float) -> ToolResult:
        self.events(ToolCallFinished(prep.request, result, duration))
        decision = prep.decision
        self.audit({
            "type": "tool_decision", "request_id": prep.request.request_id, "tool_name": prep.request.tool_name,
            "arguments": prep.request.parameters, "level": decision.level.label if decision else None,
            "policy": decision.action if decision else None,
            "reasons": list(decision.reasons) if decision else [],
            "matched": list(decision.matched) if decision else [],
            "user_choice": prep.answer.choice if prep.answer else None,
            "user_reason": prep.answer.reason if prep.answer else None,
            "grant": prep.answer.grant.label if prep.answer and prep.answer.grant else None,
            "status": result.status, "dry_run": self.dry_run, "duration_s": round(duration, 3),
        })
        return result
