"""TEPS: Tool Execution & Permission Service.

`TEPSEngine.execute_tool(request dict) -> result dict` (typed: `execute`, `execute_batch`): ask the policy, show
ICERC and ask the user through an `Approver` when needed, run the handler, return the result (the stable formats:
docs/ARCHITECTURE.md).
TEPS executes; it does not render: everything the user sees goes out as events.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from framework_core.core.approval import (MCP_WARNING, STOPPED, STOPPED_HERE, ApprovalAnswer, ApprovalRequest, Approver,
                                          DeclineAllApprover)
from framework_core.config.models import TepsSettings
from framework_core.errors import ToolArgumentError, ToolError
from framework_core.core.events import (EventSink, Notice, Preparing, ToolCallFinished, ToolCallStarted,
                                        ToolOutputChunk, discard)
from framework_core.core.teps_controls import TepsControls
from framework_core.core.fate import CYCLE, CallFeatures, Fate, SandboxFacts, answered, can_preview, decide_fate
from framework_core.lial_core import ToolRequest, ToolResult, ToolStatus
from framework_core.policy.decide import CallFacts, Decision, PolicyState, decide
from framework_core.policy.levels import Level
from framework_core.tools.base import ActionPreview, ToolContext, ToolRegistry, ToolSpec
from framework_core.sandbox.git_runs import workspace_git_runs

if TYPE_CHECKING:
    from framework_core.config.load import LoadedConfig
    from framework_core.core.audit import AuditLog
    from framework_core.policy.kinds import GrantOption
    from framework_core.sandbox.changeset import ChangeSet
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.sandbox.undo_store import UndoStore

AuditSink = Callable[[dict[str, Any]], None]
INTERRUPTED = "interrupted by the user (Ctrl-C) before this call finished"
MODES = CYCLE  # how much runs without asking (the table: core/fate.py); the REPL cycles them with Shift-Tab
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
    fate: Fate | None = None  # what happens to the call (core/fate.py), after the user's answer when it asked
    screen_note: str = ""  # said on the call's result line (an auto-run: "auto · sandboxed · /undo 1")
    notes: list[str] = field(default_factory=list)


class TEPSEngine(TepsControls):
    """Executes tool requests under the permission policy. One engine per session."""

    def __init__(self, config: "TepsSettings | dict[str, Any] | LoadedConfig | None" = None, *,
                 registry: ToolRegistry | None = None, workspace: Path | None = None, approver: Approver | None = None,
                 policy: PolicyState | None = None, events: EventSink = discard, audit: AuditSink | None = None,
                 env: dict[str, str] | None = None, sandbox: "Sandbox | None" = None,
                 undo: "UndoStore | None" = None, audit_log: "AuditLog | None" = None) -> None:
        from framework_core.core.construct import teps_parts
        from framework_core.tools.envscrub import scrub_env

        self.workspace = (workspace or Path.cwd()).resolve()
        # TEPSEngine(config) alone builds the parts not given as the app builds them (core/construct.py)
        parts = teps_parts(config, self.workspace, registry=registry, policy=policy, sandbox=sandbox, undo=undo)
        self.settings = parts.settings
        self.registry = parts.registry
        self.approver: Approver = approver or DeclineAllApprover()
        self.policy = parts.policy
        self.events = events
        self.audit = audit or (lambda record: None)
        self.audit_log = audit_log  # the workspace's tamper-evident log (core/audit.py): one record per call
        self.dry_run = self.settings.dry_run_enabled
        self.mode = "ask"  # one of MODES
        self._bulk_after: list[int] = []  # per call of the current reply: later calls approvable together
        self._approve_rest = False  # the user said yes to the remaining calls of this reply
        self.turn_stopped = False  # the user stopped the turn (Esc) in the last batch: the rest was not run
        self._running_since: float | None = None  # when the call now running started (Ctrl-C reports it)
        clean, withheld = scrub_env(os.environ if env is None else env, self.settings.keep_env)
        self.sandbox = parts.sandbox
        self.undo = parts.undo
        self._built_sandbox = parts.built_sandbox
        if parts.built_sandbox:
            weakref.finalize(self, parts.sandbox.close)  # its runtime folder goes with the engine
        self.context = ToolContext(workspace=self.workspace, settings=self.settings, env=clean,
                                   undo=self.undo, withheld_env=withheld, sandbox=self.sandbox)
        self._warm_lock, self._warmed = threading.Lock(), False

    def close(self, *, sandbox: bool = False) -> None:
        """Remove the temporary folders of the parts this engine built itself; with `sandbox`, the sandbox's
        runtime folder also when the app gave it (the session's end: TMPDIR is left as it was found)."""
        if self._built_sandbox or sandbox:
            self.sandbox.close()

    def warm_up(self) -> None:
        """Do now what the first call would otherwise pay for: the policy's parser and program table, the tools'
        argument validators, the sandbox's probe of this machine and what its first command needs (the home's
        mounts, the workspace's scans). Called in the background while the user types, so the first call costs
        what the tenth does; a call that comes first waits for it (`execute_batch` says so on screen)."""
        with self._warm_lock:
            if self._warmed:
                return
            from framework_core.policy.classifier import classify_command

            classify_command("ls -la")
            for spec in self.registry.all():
                spec.validator  # noqa: B018 - compiles the schema once
            if self.sandbox is not None:
                self.sandbox.warm_up()
            self._warmed = True

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
        valid history. An answer that stops the turn (Esc) answers every later call as not run, unasked, and sets
        `turn_stopped` so that the turn loop sends nothing more.
        """
        results: list[ToolResult] = []
        total = len(requests)
        keep = on_result or (lambda result: None)
        self._approve_rest = self.turn_stopped = False
        try:
            if not self._warmed:  # the first call of a session: its preparation shows at once, not as a silence
                self.events(Preparing("the sandbox"))  # (Ctrl-C or Esc meanwhile answers every call, below)
                self.warm_up()
            self._bulk_after = self._plan(requests) if total > 1 else []
            for index, req in enumerate(requests, start=1):
                if self.turn_stopped:  # the user stopped the turn (Esc): each later call is answered, never asked
                    results.append(self._finish(_Prepared(req), self._result(req, "declined_by_user", message=STOPPED),
                                                0.0))
                else:
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
        fates = [self._fate(p) if p.early is None else None for p in preps]
        words = []
        for n, (prep, fate) in enumerate(zip(preps, fates, strict=True), start=1):
            what = fate.word if fate is not None else "not valid"
            title = prep.preview.title if prep.preview else prep.request.tool_name
            body = " ".join((prep.preview.body if prep.preview and prep.preview.lexer == "bash" else "").split())
            words.append((what, f"  {n}. {title}{': ' + body[:70] + ('…' if len(body) > 70 else '') if body else ''}"
                                f"  ({what})"))
        if any(w in ("asks", "blocked") for w, _ in words):
            self.events(Notice("info", f"This reply has {len(requests)} calls, decided in turn:\n"
                                       + "\n".join(line for _, line in words)))
        bulk = [bool(f and f.verb == "ask" and f.bulk) for f in fates]
        return [sum(bulk[i + 1:]) for i in range(len(preps))]

    def _fate(self, prep: _Prepared) -> Fate:
        """This call's fate (core/fate.py), from the policy's decision, the mode, dry run and the sandbox."""
        assert prep.decision
        return decide_fate(prep.decision, self._features(prep), self._box(), self.mode, dry_run=self.dry_run,
                           approved_rest=self._approve_rest)

    def _features(self, prep: _Prepared) -> CallFeatures:
        assert prep.spec and prep.preview
        spec = prep.spec
        return CallFeatures(spec.kind, spec.runs_process, spec.network, prep.preview.inside_workspace,
                            self._control(spec, prep.preview), self._implicit(spec, prep.preview))

    def _box(self) -> SandboxFacts:
        box = self.sandbox
        return SandboxFacts(box.active, box.overlay, box.is_complete())

    # ---- steps -----------------------------------------------------------------------------

    def _run_one(self, req: ToolRequest, index: int, total: int) -> ToolResult:
        """One call: its fate, the user's answer when it asks, then the handler (or the result of not running)."""
        prep = self._prepare(req)
        if prep.early is not None:
            return self._finish(prep, prep.early, 0.0)
        assert prep.preview
        fate = prep.fate = self._fate(prep)
        if fate.verb == "ask":
            prep.answer = self._ask(prep, index, total)
            fate = prep.fate = answered(fate, prep.answer)
            if prep.answer.choice == "session" and prep.answer.grant is not None:
                self._remember(prep.answer.grant)
            self._approve_rest = self._approve_rest or prep.answer.remaining
            self.turn_stopped = prep.answer.stop
        if fate.verb in ("deny", "refused", "declined"):
            return self._finish(prep, self._not_run(prep), 0.0)
        if fate.verb == "shown":
            return self._dry_run(prep)  # shown, never asked about: it will not run
        self.events(ToolCallStarted(req, prep.preview.title, prep.preview.body, not fate.asked, fate.reason))
        self.context.scope = fate.scope
        return self._execute(prep)

    def _not_run(self, prep: _Prepared) -> ToolResult:
        """The result of a call blocked by the policy, refused by the mode, or declined by the user."""
        assert prep.fate and prep.decision and prep.preview
        req, decision = prep.request, prep.decision
        if prep.fate.verb == "deny":  # shown once, by the finished call
            hint = (" Dangerous commands run only after the user turns on /allow-dangerous."
                    if decision.level == Level.DANGEROUS else "")
            return self._result(req, "blocked_by_policy", message=f"Blocked by policy: {prep.fate.reason}.{hint}",
                                reasons=list(decision.reasons))
        if prep.fate.verb == "refused":
            return self._result(req, "declined_by_user", message=PLAN_DECLINED, mode="plan",
                                would_run=prep.preview.body if prep.preview.lexer == "bash" else prep.preview.title)
        data: dict[str, Any] = {"message": STOPPED_HERE if prep.answer and prep.answer.stop
                                else "User declined execution."}
        if prep.answer and prep.answer.reason:
            data["user_reason"] = prep.answer.reason
        return self._result(req, "declined_by_user", **data)

    def _dry_run(self, prep: _Prepared) -> ToolResult:
        """Dry run, for a call that cannot run in the overlay: show what it would do, run nothing."""
        assert prep.preview
        self.events(ToolCallStarted(prep.request, prep.preview.title, prep.preview.body, True,
                                    "dry run: shown, not run"))
        return self._finish(prep, self._result(
            prep.request, "dry_run", message="Dry run: not run (only commands can be previewed in the sandbox's "
            "overlay; this call would change things directly).", would_run=prep.preview.body or prep.preview.title),
            0.0)

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
        except ToolError as exc:  # a call refused before anyone is asked (an edit of a file changed since it was read)
            prep.early = self._result(req, "error", error_message=str(exc), **exc.data)
            return prep
        except Exception as exc:  # a broken previewer must not crash the session
            prep.early = self._result(req, "error", error_message=f"Could not prepare {spec.name}: {exc}")
            return prep
        prep.decision = self._decide(spec, req, prep.preview)
        return prep

    def _decide(self, spec: ToolSpec, req: ToolRequest, preview: ActionPreview) -> Decision:
        """The policy's decision; a write to several files (a patch) is judged file by file, the strictest wins."""
        if not preview.paths:
            return decide(self._facts(spec, req, preview), self.policy)
        from dataclasses import replace

        from framework_core.policy.decide import strictest

        return strictest([decide(self._facts(spec, req, replace(preview, path=p, paths=[])), self.policy)
                          for p in preview.paths])

    def _facts(self, spec: ToolSpec, req: ToolRequest, preview: ActionPreview) -> CallFacts:
        command = req.parameters.get("command") if spec.kind == "bash" else None
        return CallFacts(tool_name=spec.name, kind=spec.kind, source=spec.source, permission=spec.permission,
                         command=str(command) if command is not None else None, path=preview.path,
                         inside_workspace=preview.inside_workspace, saved_output=preview.saved_output,
                         home=str(Path.home()), control=self._control(spec, preview),
                         git_runs=workspace_git_runs(self.workspace) if spec.kind == "bash" else ())

    def _control(self, spec: ToolSpec, preview: ActionPreview) -> str | None:
        """What a write to a control path can do (git hooks, .mcp.json, rule files, ...), or None."""
        if spec.kind != "write" or not preview.path:
            return None
        from framework_core.sandbox.control import control_reason

        return self._each_path(preview, lambda p: control_reason(p, self.workspace, self.sandbox.protected_extra,
                                                                 self.sandbox.named_controls()))

    def _implicit(self, spec: ToolSpec, preview: ActionPreview) -> str | None:
        """What makes a written file run with nothing named (auto mode asks about it), or None."""
        if spec.kind != "write" or not preview.path:
            return None
        from framework_core.sandbox.control import implicit_reason

        return self._each_path(preview, lambda p: implicit_reason(p, self.workspace))

    def _each_path(self, preview: ActionPreview, judge: Callable[[Path], str | None]) -> str | None:
        """`judge` of the one path a write changes, or of each of a patch's paths (each named with its reason)."""
        found = [(p, why) for p in preview.paths or [preview.path or ""] if (why := judge(Path(p)))]
        if not preview.paths or not found:
            return found[0][1] if found else None
        return "; ".join(f"{os.path.relpath(p, self.workspace)}: {why}" for p, why in found)

    def sandbox_note(self, prep: _Prepared) -> tuple[str, bool]:
        """(what the sandbox will allow this call, whether that deserves a warning) for the approval panel."""
        assert prep.fate
        if not self.sandbox.active:
            return ("NO SANDBOX: this runs with your own permissions (" + self.sandbox.describe() + ")", True)
        scope = prep.fate.scope
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
            grant_options=[] if dangerous or prep.preview.paths else list(prep.decision.grant_options),
            default="deny" if dangerous else None,
            warning=MCP_WARNING if prep.spec.server else None, server=prep.spec.server)
        control = self._control(prep.spec, prep.preview)
        if control:
            req.control_note = (f"This file is a control path: {control}. Check the change below; "
                                "this is asked every time and never remembered.")
        assert prep.fate
        if not control and prep.fate.by == "auto mode":  # a write of a file that runs with nothing named
            req.control_note = f"Auto mode asks: {prep.fate.reason.removeprefix('auto mode asks: ')}."
        if 0 < index <= len(self._bulk_after) and not dangerous and prep.fate.bulk:
            req.remaining = self._bulk_after[index - 1]
        if prep.spec.runs_process:
            req.sandbox_note, req.sandbox_warn = self.sandbox_note(prep)
            req.can_unsandbox = self.sandbox.active and self.sandbox.profile != "off"
            req.can_network = self.sandbox.active and not prep.fate.scope.network
            req.can_preview = can_preview(prep.decision, self._features(prep), self._box())
        answer = self.approver.approve(req)
        if dangerous and answer.choice == "session":
            answer = ApprovalAnswer("once")  # never remember a Dangerous approval
        return answer

    def _execute(self, prep: _Prepared) -> ToolResult:
        assert prep.spec
        req, spec = prep.request, prep.spec
        ctx = self.context
        ctx.on_output = lambda text: self.events(ToolOutputChunk(req.request_id, text))
        ctx.review = ((lambda cs: self._review(prep, cs)) if ctx.scope.preview
                      else (lambda cs: self._review(prep, cs, held=True)) if ctx.scope.hold else None)
        self.audit({"type": "tool_started", "request_id": req.request_id, "tool_name": req.tool_name})
        newest = self._newest_change()
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
        if prep.fate is not None and prep.fate.auto:
            prep.screen_note = self._auto_note(prep.fate, newest)
        return self._finish(prep, result, time.monotonic() - start)

    def _newest_change(self) -> str | None:
        entries = self.undo.entries()
        return entries[0].id if entries else None

    def _auto_note(self, fate: Fate, before: str | None) -> str:
        """What an auto-run says on screen: that auto mode ran it, sandboxed, and the /undo that reverts what
        landed (entries are numbered newest first, so a change that just landed is `/undo 1`)."""
        where = "auto · sandboxed" if fate.reason == "auto · sandboxed" else "auto"
        entries = self.undo.entries()
        landed = [n for n, e in enumerate(entries, start=1) if before is None or e.id > before]
        return f"{where} · /undo {landed[-1]}" if landed else f"{where} · nothing landed"

    def _review(self, prep: _Prepared, changes: "ChangeSet", *, held: bool = False) -> bool:
        """Show a previewed change set, or one auto mode held (it holds files that run with nothing named), and
        ask whether to apply it (an approver that cannot ask says no)."""
        review = getattr(self.approver, "review_held" if held else "review_changes", None)
        if review is None:
            return False
        assert prep.spec and prep.preview and prep.decision
        req = ApprovalRequest(request=prep.request, preview=prep.preview, level=prep.decision.level,
                              reasons=list(prep.decision.reasons), source=prep.spec.source)
        return bool(review(req, changes.title(), changes.diff()))  # the title names the paths, not only counts

    # ---- results ---------------------------------------------------------------------------

    @staticmethod
    def _result(req: ToolRequest, result_status: ToolStatus, /, **data: Any) -> ToolResult:
        return ToolResult(req.request_id, req.tool_name, result_status, data)

    def _interrupted(self, req: ToolRequest) -> ToolResult:
        return self._result(req, "declined_by_user", message=INTERRUPTED)

    def _finish(self, prep: _Prepared, result: ToolResult, duration: float) -> ToolResult:
        """The one place a call's result is final: bounded as the model will read it, said on screen, recorded,
        returned."""
        result = self.bounded(result)
        self.events(ToolCallFinished(prep.request, result, duration, prep.screen_note))
        decision, fate = prep.decision, prep.fate
        self.audit({
            "type": "tool_decision", "request_id": prep.request.request_id, "tool_name": prep.request.tool_name,
            "arguments": prep.request.parameters, "level": decision.level.label if decision else None,
            "policy": decision.action if decision else None,
            "reasons": list(decision.reasons) if decision else [],
            "matched": list(decision.matched) if decision else [],
            "user_choice": prep.answer.choice if prep.answer else None,
            "user_reason": prep.answer.reason if prep.answer else None,
            "grant": prep.answer.grant.label if prep.answer and prep.answer.grant else None,
            "fate": fate.verb if fate else None, "decided_by": fate.by if fate else None, "mode": self.mode,
            "scope": {k: v for k, v in vars(fate.scope).items() if v} if fate else None,
            "status": result.status, "dry_run": self.dry_run, "duration_s": round(duration, 3),
        })
        if self.audit_log is not None:
            self.audit_log.record_call(prep.request, prep.decision, prep.answer, result, duration, engine=self,
                                       fate=prep.fate)
        return result
