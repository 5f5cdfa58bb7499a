"""The headless turn loop. It knows nothing about terminals: it takes an Approver and emits events.

run_turn: history += user message; loop { compact when the next request would not fit, stream the reply (with
retries; once more after compacting when the API says it is too long), act on how it ended (tool calls through
TEPS, a cut, a refusal, a pause) } until a reply needs no further request. Whatever happens (Ctrl-C, API errors,
cut streams), the history stays valid for the provider's API.

The loop is this one class. Its collaborators have public interfaces: `ActiveModel` (the provider and model in
force), `Compactor` (the context measure and compaction), `context_fit.fit_request` and `limits` (pure: what
to send and what to say), `TEPSEngine` (the tool calls), `user_command` (`!cmd`).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Mapping

from framework_core.adapters.tool_ids import make_unique
from framework_core.core import limits
from framework_core.core.accounting import status_total
from framework_core.core.active_model import ActiveModel
from framework_core.core.compaction import Compactor, summary_request
from framework_core.core.loop_guard import LoopGuard
from framework_core.core.events import (AssistantMessageDone, AssistantReasoningDelta, AssistantTextDelta, EventSink,
                                        ModelRequestStarted, Notice, RetryScheduled, ToolCallQueued, TurnFinished,
                                        TurnOutcome)
from framework_core.core.status import Closed, Status
from framework_core.errors import ConfigError, LacaError, ProviderError, StreamCutError
from framework_core.lial_core import (LLMResponse, Message, ReasoningDelta, StreamDone, TextDelta, ToolResult,
                                      ToolSchema, Usage)
from framework_core.teps import BatchInterrupted

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities
    from framework_core.config.models import FrameworkConfig, ProviderSettings
    from framework_core.core.session import MessageManager
    from framework_core.dcm import DynamicContextManager
    from framework_core.teps import TEPSEngine
    from framework_core.tools.mcp import McpManager

MAX_STEPS_PER_TURN = 50


class Agent:
    """One conversation: config, DCM, the active model, TEPS and the session, and the turn loop over them."""

    def __init__(self, config: "FrameworkConfig", *, dcm: "DynamicContextManager", teps: "TEPSEngine",
                 session: "MessageManager", events: EventSink, mcp: "McpManager | None" = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.config, self.dcm, self.teps, self.session, self.events, self.mcp = config, dcm, teps, session, events, mcp
        self.llm = ActiveModel(config, dcm, env)
        self.persona_id = config.default_persona
        self.pending_notes: list[str] = []
        self.context = Compactor(session=lambda: self.session, caps=lambda: self.caps, fixed_tokens=self._fixed_tokens,
                                 summarise=self._summarise, saver=lambda: self.teps.saver("old-output"))
        self._said: set[str] = set()  # notes said once per session (capabilities, tool definitions)
        self._fit_note = ""  # what the last request left out of the history, said once per change
        self._mcp_waited = False
        self._guard = LoopGuard(config.repeated_call_limit)
        if mcp is not None:  # results sized for the active model's window
            mcp.bind(window=lambda: self.caps.context_window)
        session.on_write_state = self._on_write_state

    # ---- the model and the persona ------------------------------------------------------------
    @property
    def provider_name(self) -> str:
        return self.llm.name

    @property
    def provider(self) -> "ProviderSettings":
        return self.llm.settings

    @property
    def caps(self) -> "Capabilities":
        return self.llm.caps

    def set_provider(self, name: str, model: str | None = None) -> None:
        """Switch provider (and optionally model) mid-session; the neutral history converts itself."""
        self.llm.switch(name, model)

    def set_model(self, model: str) -> None:
        self.llm.set_model(model)

    def take_model_notes(self) -> list[str]:
        """The active model's profile notes, for a front end to say now: the loop does not say them again."""
        notes = list(self.caps.notes)
        self._said.update(notes)
        return notes

    def set_persona(self, persona_id: str) -> None:
        ids = self.dcm.persona_ids()
        if persona_id not in ids:
            raise ConfigError(f"Unknown persona '{persona_id}'. Valid personas: {', '.join(ids)}")
        self.persona_id = persona_id

    def set_mode(self, mode: str) -> None:
        """ask / accept-edits / plan / auto: how much runs without asking (the table in core/fate.py). The model
        is told with the next message."""
        from framework_core.core.fate import CYCLE, MODES

        if mode not in MODES:
            raise ConfigError(f"unknown mode '{mode}'. Modes: {', '.join(CYCLE)}")
        if mode != self.teps.mode:
            self.teps.mode = mode
            self.note_for_model(MODES[mode].note)

    def warm_up(self, *, provider: bool = True) -> threading.Thread:
        """In the background: with `provider`, the provider's SDK and client (the larger part of LACA's memory: the
        REPL asks once the user types), first, since the first reply needs them before any tool; then the tools
        (policy, argument validators, the sandbox's probe and first command's setup)."""
        def work() -> None:
            if provider:
                self.llm.prepare()
            try:
                self.teps.warm_up()
            except Exception:
                pass  # the first call reports problems properly

        thread = threading.Thread(target=work, name="laca-warmup", daemon=True)
        thread.start()
        return thread

    # ---- the conversation -----------------------------------------------------------------------
    def note_for_model(self, text: str) -> None:
        """Something the user did outside the conversation (an /undo): said to the model with the next message."""
        self.pending_notes.append(text)

    def replace_session(self, session: "MessageManager") -> None:
        """Go on in a new session (/clear): a fresh conversation and transcript; the same tools, grants, mode
        and undo store (a file change made before stays undoable)."""
        self.session = session
        session.on_write_state = self._on_write_state
        self.teps.audit = session.record
        self.pending_notes = []
        self.context.reset()

    def repair_history(self) -> None:
        """After an interruption outside a turn: every tool call answered, the history valid for the provider."""
        self.session.repair()

    def run_user_command(self, command: str) -> ToolResult:
        """`!cmd`: the user's own command, in the sandbox as an approved one; recorded, and told to the model."""
        from framework_core.core import user_command

        result = user_command.run_user_command(self.teps, self.events, command)
        self.session.record(user_command.record(command, result))
        self.note_for_model(user_command.note_text(command, result))
        return result

    def compact(self) -> str:
        """/compact: trim old tool output and summarise the older turns now."""
        return self.context.compact(force=True)

    def usage_report(self) -> str:
        return self.context.report(self.provider.model)

    def close_session(self) -> Closed:
        """Record the provider, model and persona (--continue goes on with these) and write the transcript."""
        self.session.record({"type": "meta", "provider": self.provider_name, "model": self.provider.model,
                             "persona": self.persona_id})
        return Closed(self.session.session_id, self.session.close())

    def close(self) -> Closed:
        """End the conversation: MCP servers stopped, the sandbox's temporary folders removed, the session closed."""
        if self.mcp is not None:
            self.mcp.close()
        self.teps.close(sandbox=True)  # its runtime folder in TMPDIR: left as it was found
        return self.close_session()

    def status(self) -> Status:
        """What the status line and the prompt show, read in one call."""
        teps, session = self.teps, self.session
        sandbox, active = teps.sandbox_state()
        return Status(
            provider=self.provider_name, model=self.provider.model, persona=self.persona_id, mode=teps.mode,
            dry_run=teps.dry_run, allow_dangerous=teps.allow_dangerous, not_saved=bool(session.write_error),
            no_api_key=self.llm.key_problem is not None, sandbox=sandbox, sandbox_active=active,
            context_percent=self.context.percent(), totals=status_total(session.usage, self.caps.prices),
            session_id=session.session_id, auto_ready=teps.auto_ready)

    def _on_write_state(self, error: str | None) -> None:
        if error is not None:
            self.events(Notice("error", f"{error}. The conversation goes on in memory; LACA keeps the unwritten "
                                        "records and writes them as soon as the disk takes them again."))
        else:
            self.events(Notice("info", "The session transcript is being written again; nothing was lost."))

    # ---- the turn -----------------------------------------------------------------------------
    def run_turn(self, text: str) -> TurnOutcome:
        outcome = TurnOutcome()
        self._guard = LoopGuard(self.config.repeated_call_limit)  # core/loop_guard.py: one per turn
        self.session.repair()
        notes, self.pending_notes = self.pending_notes, []
        self.session.add_user("".join(f"[LACA: {n}]\n" for n in notes) + text)
        try:
            for _ in range(MAX_STEPS_PER_TURN):
                self._compact_if_needed()  # before every request: between tool rounds and in -p too
                response = self._reply_within_window(outcome)
                if response is None or not self._after_reply(response, outcome):
                    break
            else:
                outcome.stopped_at_limit = True
                self.events(Notice("warning", f"Stopped after {MAX_STEPS_PER_TURN} tool rounds in one turn; "
                                              "send a message to let the model continue."))
        except KeyboardInterrupt:
            outcome.interrupted = True
        except LacaError as exc:
            outcome.error = str(exc)
            self.events(Notice("error", str(exc)))
        finally:
            fixes = self.session.repair()
            if fixes and not outcome.interrupted:
                self.events(Notice("warning", "History repaired: " + "; ".join(fixes)))
        self.events(TurnFinished(outcome.usage, outcome.interrupted, outcome.error, stopped=outcome.stopped))
        return outcome

    def _compact_if_needed(self) -> None:
        note = self.context.maybe_compact()
        if note:
            self.events(Notice("info", note))

    def _reply_within_window(self, outcome: TurnOutcome) -> LLMResponse | None:
        """One reply; a request refused as too long for the context window is compacted and sent once more."""
        from framework_core.adapters.errors import ContextTooLong

        try:
            return self._reply(outcome)
        except ContextTooLong as exc:
            note = self.context.compact(force=True)
            self.events(Notice("warning", limits.window_retry_notice(exc.status, note)))
            return self._reply(outcome)

    def _reply(self, outcome: TurnOutcome) -> LLMResponse | None:
        """Stream one reply into the history. Returns None when the turn must end here."""
        from framework_core.core.context_fit import fit_request

        self._wait_for_mcp()
        for note in self.caps.notes:  # unknown model, retiring model, a setting not sent
            self._say_once("info", note)
        system = self.dcm.build_system_prompt(self.persona_id, small=self.caps.small_model) + self._mcp_news()
        tools = self.teps.registry.schemas()
        request = fit_request(list(self.session.messages), system, tools, self.caps, self.provider.model)
        if request.tools_note:
            self._say_once("warning", request.tools_note)
        if request.cut_note and request.cut_note != self._fit_note:
            self.events(Notice("warning", request.cut_note))
        self._fit_note = request.cut_note
        shown: list[str] = []
        stream = self._stream(request.messages, tools, system)
        try:
            for event in stream:
                if isinstance(event, TextDelta):
                    shown.append(event.text)
                    self.events(AssistantTextDelta(event.text))
                elif isinstance(event, ReasoningDelta):
                    self.events(AssistantReasoningDelta(event.text))
                elif isinstance(event, StreamDone):
                    for note in self.llm.adapter.take_notes():  # e.g. the tool mode it found for the server
                        self._say_once("info", note)
                    return self._accept(event.response, outcome)
        except KeyboardInterrupt:
            self._keep_partial("".join(shown), "interrupted", outcome)
            raise
        except ProviderError as exc:
            partial = "".join(shown)
            if not partial:
                raise
            self._keep_partial(partial, "cut_off", outcome)
            why = "a network problem" if isinstance(exc, StreamCutError) else str(exc)
            self.events(Notice("warning", f"The reply was cut off by {why}; the partial text is kept. "
                                          "Send a message (e.g. 'continue') to go on."))
            return None
        finally:
            close = getattr(stream, "close", None)
            if close:
                close()
        raise StreamCutError("the reply ended without a final event")

    def _stream(self, messages: list[Message], tools: list[ToolSchema], system: str):  # -> Iterator[StreamEvent]
        """One request to the active model, its retries said as events."""
        from framework_core.adapters.retry import stream_with_retry

        def on_retry(attempt: int, max_attempts: int, delay: float, reason: str) -> None:
            self.events(RetryScheduled(attempt, max_attempts, delay, reason))

        self.events(ModelRequestStarted(self.provider_name, self.provider.model))  # the spinner, with seconds
        return stream_with_retry(lambda: self.llm.adapter.stream(messages, tools, system), self.config.retry,
                                 on_retry)

    def _accept(self, response: LLMResponse, outcome: TurnOutcome) -> LLMResponse:
        make_unique(self.session.messages, response.tool_requests)  # one result per call, even if ids repeat
        # A reply the output limit stopped is whole as far as the API is concerned, but the answer is not:
        # it is kept as it came and shown (and counted by -p) as cut off; _after_reply says what to do.
        cut = response.stop_kind == "length" and not response.tool_requests and bool(response.conversation)
        message = Message("assistant", response.conversation, tool_calls=list(response.tool_requests),
                          provider_state=response.provider_state, meta={"cut_off": "output limit"} if cut else {})
        self.session.add(message)
        self.session.record_usage(response.usage)
        outcome.usage = outcome.usage + response.usage
        outcome.text = response.conversation
        self.events(AssistantMessageDone(message, response.usage, cut_off=cut))
        return response

    def _keep_partial(self, text: str, why: str, outcome: TurnOutcome) -> None:
        if not text.strip():
            return
        note = "[reply interrupted by the user]" if why == "interrupted" else "[reply cut off]"
        message = Message("assistant", f"{text}\n\n{note}", meta={why: True})
        self.session.add(message)
        outcome.text = text
        self.events(AssistantMessageDone(message, Usage(), cut_off=True))

    def _after_reply(self, response: LLMResponse, outcome: TurnOutcome) -> bool:
        """Act on how the reply ended (core/limits.py). True when the model must be asked again (tool results, a
        paused turn), unless the user stopped the turn at a question (every call is answered; the next message
        says what to do)."""
        self.context.counted()  # the API's count of this request covers the history up to here
        kind, calls = response.stop_kind, response.tool_requests
        if kind == "refusal":
            self._refuse(response)
            return False
        if kind == "pause":
            return True
        if kind == "length":
            self.events(Notice("warning", limits.cut_notice(self.caps, response, bool(calls))))
            if not calls:
                return False
            *complete, cut = calls  # the last call, which the limit cut, is answered without running
            if complete:
                self._run_tools(replace(response, tool_requests=complete), outcome)

            result = limits.cut_call_result(cut, self.caps.output_tokens)
            self.session.add(Message.tool_result(result))
            outcome.tool_results.append(result)
            return not (outcome.stopped or outcome.stopped_at_limit)
        if calls:
            self._run_tools(response, outcome)
            return not (outcome.stopped or outcome.stopped_at_limit)
        return False

    def _refuse(self, response: LLMResponse) -> None:
        """Keep the turn valid without the refused text; answer any calls it made as not run."""
        kept = limits.without_refused_text(self.session.messages)
        if kept is not None:
            history, results = kept
            self.session.replace(history, "refusal: the refused text dropped")
            for result in results:
                self.session.add(result)
        self.events(Notice("warning", limits.refusal_notice(response)))

    def _run_tools(self, response: LLMResponse, outcome: TurnOutcome) -> None:
        calls = response.tool_requests
        stop = self._guard.check(calls)
        if stop is not None:  # the same call again: the turn ends, each call answered as not run
            results = self._guard.stopped_results(calls, stop)
            for result in results:
                self.session.add_result(result)
            outcome.tool_results += results
            outcome.stopped_at_limit = True
            self.events(Notice("warning", stop.user_note))
            return
        for index, call in enumerate(calls, start=1):
            self.events(ToolCallQueued(call, index, len(calls)))
        try:
            results = self.teps.execute_batch(calls, on_result=self.session.add_result)
        except BatchInterrupted as exc:
            outcome.tool_results += exc.results
            raise
        outcome.tool_results += results
        self._guard.record(calls, results)
        outcome.stopped = self.teps.turn_stopped  # Esc at a question: the turn ends without another request

    def _summarise(self, older: list[Message]) -> str:
        """The compactor's summary request: the older turns as text, no tools; its tokens counted in /tokens."""
        system = self.dcm.build_system_prompt(self.persona_id)
        self.events(Notice("info", f"Summarising {len(older)} older message(s) to free context (Ctrl-C stops)…"))
        for event in self._stream(summary_request(older), [], system):
            if isinstance(event, StreamDone):
                usage = event.response.usage
                self.session.record_usage(usage, side_request=True)  # paid for: counted in /tokens
                self.events(Notice("info", f"Summary received ({usage.input_tokens:,} input + "
                                           f"{usage.output_tokens:,} output tokens, counted in /tokens)."))
                return event.response.conversation.strip()
        return ""

    def _fixed_tokens(self) -> int:
        """The estimate of what every request sends besides the history: the system prompt and the tools."""
        from framework_core.estimate import request_tokens

        return request_tokens(self.dcm.build_system_prompt(self.persona_id), self.teps.registry.schemas())

    def _say_once(self, level: str, note: str) -> None:
        if note not in self._said:
            self._said.add(note)
            self.events(Notice(level, note))  # type: ignore[arg-type]  # info or warning

    def _wait_for_mcp(self) -> None:
        if self.mcp is None or self._mcp_waited:
            return
        self._mcp_waited = True
        pending = self.mcp.wait_ready(0)
        if pending:  # say so: a server still installing (uvx) could otherwise look like a hang
            self.events(Notice("info", f"Waiting up to {self.config.mcp_startup_wait_s:g} s for MCP server(s) "
                                       f"still starting: {', '.join(pending)} (Ctrl-C stops waiting)"))
            try:
                pending = self.mcp.wait_ready(self.config.mcp_startup_wait_s)
            except KeyboardInterrupt:
                pending = self.mcp.wait_ready(0)
        if pending:
            waiting = ", ".join(pending)
            self.events(Notice("warning", f"MCP server(s) still starting, continuing without them: {waiting}"))

    def _mcp_news(self) -> str:
        """Say what happened to MCP servers since the last request; their instructions join the system prompt."""
        if self.mcp is None:
            return ""
        for level, text in self.mcp.take_notices():
            self.events(Notice(level, text))  # type: ignore[arg-type]  # the MCP manager's levels are Notice's
        return self.mcp.instructions_prompt()
