"""The headless turn loop. It knows nothing about terminals: it takes an Approver and emits events.

run_turn: history += user message; loop { stream the reply (with retries), run the tool calls through TEPS,
history += calls + one result per call } until a reply has no tool calls. Whatever happens (Ctrl-C, API
errors, cut streams), the history stays valid for the provider's API.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Mapping

from framework_core.adapters.tool_ids import make_unique
from framework_core.errors import ConfigError, LacaError, ProviderError, StreamCutError
from framework_core.core.events import (AssistantMessageDone, AssistantReasoningDelta, AssistantTextDelta, EventSink,
                                   ModelRequestStarted, Notice, RetryScheduled, ToolCallQueued, TurnFinished,
                                   TurnOutcome)
from framework_core.lial_core import LLMResponse, Message, ReasoningDelta, StreamDone, TextDelta, ToolResult, Usage
from framework_core.core.limits import after_reply, compact_if_needed, reply_within_window, say_capability_notes
from framework_core.teps import BatchInterrupted

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities
    from framework_core.config.models import FrameworkConfig, ProviderSettings
    from framework_core.dcm import DynamicContextManager
    from framework_core.lial_core import LLMAdapterInterface
    from framework_core.core.session import MessageManager
    from framework_core.teps import TEPSEngine
    from framework_core.tools.mcp import McpManager

MAX_STEPS_PER_TURN = 50


class Agent:
    """Wires config, DCM, adapter, TEPS and the session into one conversation."""

    def __init__(self, config: "FrameworkConfig", *, dcm: "DynamicContextManager", teps: "TEPSEngine",
                 session: "MessageManager", events: EventSink, mcp: "McpManager | None" = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.dcm = dcm
        self.teps = teps
        self.session = session
        self.events = events
        self.pending_notes: list[str] = []
        self.window_fit_note = ""  # what the last request left out of the history, said once (core/context_fit.py)
        self.mcp = mcp
        if mcp is not None:  # results sized for the active model's window
            mcp.bind(window=lambda: self.caps.context_window)
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.provider_name = config.llm_provider
        self.persona_id = config.default_persona
        self._adapter: LLMAdapterInterface | None = None
        self._adapter_lock = threading.Lock()
        self._mcp_waited = False
        self.said_notes: set[str] = set()  # capability notes already shown (see limits)
        self.context_mark: int | None = None  # messages the last counted request covered (see compaction)
        self.context_full_said = False
        self.key_problem: ConfigError | None = None  # no key yet: the session opens; a message says what to set
        try:
            self.api_key = self._key_for(self.provider_name)
        except ConfigError as exc:
            self.api_key, self.key_problem = None, exc
        session.on_write_state = self._on_write_state

    # ---- provider / persona -----------------------------------------------------------------
    @property
    def provider(self) -> "ProviderSettings":
        return self.config.provider(self.provider_name)

    @property
    def caps(self) -> "Capabilities":
        """The active model's capabilities: its profile with the provider entry's overrides."""
        from framework_core.adapters.profiles import resolve

        return resolve(self.provider)

    def _key_for(self, name: str) -> str | None:
        from framework_core.config.load import resolve_api_key

        return resolve_api_key(self.config, name, self.env)

    @property
    def adapter(self) -> "LLMAdapterInterface":
        """The active provider's adapter, created on first use (the warm-up thread and a request may race for it;
        the lock makes one of them create it, for the provider in force)."""
        with self._adapter_lock:
            if self._adapter is None:
                from framework_core.adapters import create_adapter

                if self.key_problem is not None:
                    raise self.key_problem
                self._adapter = create_adapter(self.provider, self.dcm, self.api_key)
            return self._adapter

    def warm_up(self, *, provider: bool = True) -> threading.Thread:
        """In the background: get the tools ready (the policy, argument validators, the sandbox probe) and, with
        `provider`, import the provider's SDK and build its client, so the first message and the first call wait
        for neither. The SDK is the larger part of LACA's memory, so the REPL asks for it once the user starts
        typing. A switch meanwhile wins: the warmed adapter is dropped if it is no longer the one."""
        def work() -> None:
            try:
                self.teps.warm_up()
            except Exception:
                pass  # the first call reports problems properly
            if not provider or self.key_problem is not None:
                return
            try:
                adapter = self.adapter
                with self._adapter_lock:
                    if adapter is self._adapter:
                        adapter.prepare()
            except Exception:
                pass  # the first real request reports problems properly

        thread = threading.Thread(target=work, name="laca-warmup", daemon=True)
        thread.start()
        return thread

    def set_provider(self, name: str, model: str | None = None) -> None:
        """Switch provider (and optionally model) mid-session; the neutral history converts itself."""
        self.config.provider(name)  # raises ConfigError listing the valid names
        key = self._key_for(name)
        self.provider_name, self.api_key, self.key_problem = name, key, None
        if model:
            self.config.llm_settings[name].model = model
        self._reset_adapter()

    def set_model(self, model: str) -> None:
        self.provider.model = model
        self._reset_adapter()

    def set_persona(self, persona_id: str) -> None:
        ids = self.dcm.persona_ids()
        if persona_id not in ids:
            raise ConfigError(f"Unknown persona '{persona_id}'. Valid personas: {', '.join(ids)}")
        self.persona_id = persona_id

    def _reset_adapter(self) -> None:
        with self._adapter_lock:
            if self._adapter is not None:
                self._adapter.close()
            self._adapter = None

    def _on_write_state(self, error: str | None) -> None:
        if error is not None:
            self.events(Notice("error", f"{error}. The conversation goes on in memory; LACA keeps the unwritten "
                                        "records and writes them as soon as the disk takes them again."))
        else:
            self.events(Notice("info", "The session transcript is being written again; nothing was lost."))

    # ---- the turn -----------------------------------------------------------------------------
    def note_for_model(self, text: str) -> None:
        """Something the user did outside the conversation (an /undo): said to the model with the next message."""
        self.pending_notes.append(text)

    def replace_session(self, session: "MessageManager") -> None:
        """Go on in a new session (/clear): a fresh conversation and transcript; the same tools, grants, mode
        and undo store (a file change made before stays undoable)."""
        self.session = session
        session.on_write_state = self._on_write_state
        self.teps.audit = session.record
        self.pending_notes, self.context_mark, self.context_full_said = [], None, False

    def run_user_command(self, command: str) -> ToolResult:
        """`!cmd`: the user's own command, in the sandbox as an approved one; recorded, and told to the model."""
        from framework_core.core.user_command import run_user_command

        return run_user_command(self, command)

    def set_mode(self, mode: str) -> None:
        """ask / accept-edits / plan / auto: how much runs without asking (the table in core/fate.py). The model
        is told with the next message."""
        from framework_core.core.fate import CYCLE, MODES

        if mode not in MODES:
            raise ConfigError(f"unknown mode '{mode}'. Modes: {', '.join(CYCLE)}")
        if mode != self.teps.mode:
            self.teps.mode = mode
            self.note_for_model(MODES[mode].note)

    def run_turn(self, text: str) -> TurnOutcome:
        outcome = TurnOutcome()
        self.session.repair()
        notes, self.pending_notes = self.pending_notes, []
        self.session.add_user("".join(f"[LACA: {n}]\n" for n in notes) + text)
        try:
            for _ in range(MAX_STEPS_PER_TURN):
                compact_if_needed(self)  # before every request: between tool rounds and in -p too
                response = reply_within_window(self, outcome)
                if response is None or not after_reply(self, response, outcome):
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

    def _one_reply(self, outcome: TurnOutcome) -> LLMResponse | None:
        """Stream one reply into the history. Returns None when the turn must end here."""
        from framework_core.adapters.retry import stream_with_retry
        from framework_core.core.context_fit import fit_request

        self._wait_for_mcp()
        say_capability_notes(self)
        system = self.dcm.build_system_prompt(self.persona_id) + self._mcp_news()
        tools = self.teps.registry.schemas()
        messages = fit_request(self, list(self.session.messages), system, tools)
        shown: list[str] = []
        self.events(ModelRequestStarted(self.provider_name, self.provider.model))

        def on_retry(attempt: int, max_attempts: int, delay: float, reason: str) -> None:
            self.events(RetryScheduled(attempt, max_attempts, delay, reason))

        stream = stream_with_retry(lambda: self.adapter.stream(messages, tools, system), self.config.retry, on_retry)
        try:
            for event in stream:
                if isinstance(event, TextDelta):
                    shown.append(event.text)
                    self.events(AssistantTextDelta(event.text))
                elif isinstance(event, ReasoningDelta):
                    self.events(AssistantReasoningDelta(event.text))
                elif isinstance(event, StreamDone):
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

    def _accept(self, response: LLMResponse, outcome: TurnOutcome) -> LLMResponse:
        make_unique(self.session.messages, response.tool_requests)  # one result per call, even if ids repeat
        # A reply the output limit stopped is whole as far as the API is concerned, but the answer is not:
        # it is kept as it came and shown (and counted by -p) as cut off; limits.after_reply says what to do.
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

    def _run_tools(self, response: LLMResponse, outcome: TurnOutcome) -> None:
        calls = response.tool_requests
        for index, call in enumerate(calls, start=1):
            self.events(ToolCallQueued(call, index, len(calls)))
        try:
            results = self.teps.execute_batch(calls, on_result=self.session.add_result)
        except BatchInterrupted as exc:
            outcome.tool_results += exc.results
            raise
        outcome.tool_results += results
        outcome.stopped = self.teps.turn_stopped  # Esc at a question: the turn ends without another request
