"""The interactive REPL: prompt_toolkit input, rich output, slash commands, Ctrl-C / Ctrl-D handling."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from framework_core.errors import LacaError
from framework_core.ui.commands import Commands, ExitRepl
from framework_core.ui.slash import lookup, split

if TYPE_CHECKING:
    from framework_core.config_load import LoadedConfig
    from framework_core.core import Agent
    from framework_core.session import MessageManager
    from framework_core.startup import StartOptions
    from framework_core.ui.render import EventRenderer

DOUBLE_CTRL_C_S = 2.0


def run_repl(loaded: "LoadedConfig", session: "MessageManager", opts: "StartOptions", warnings: list[str]) -> int:
    from framework_core.ui.approver import TerminalApprover
    from framework_core.ui.console import make_console
    from framework_core.ui.render import EventRenderer
    from framework_core.wiring import build_agent

    console = make_console()
    renderer = EventRenderer(console, screen_lines=loaded.config.teps_settings.screen_output_lines)
    approver = TerminalApprover(console, pause=renderer.pause)
    parts = build_agent(loaded, events=renderer, approver=approver, session=session, start_mcp=not opts.no_mcp)
    repl = Repl(loaded, parts.agent, console, renderer)
    for warning in warnings:
        console.print(Text(warning, style="laca.warn"))
    return repl.run()


class Repl:
    def __init__(self, loaded: "LoadedConfig", agent: "Agent", console: Console, renderer: "EventRenderer", *,
                 pt_input: Any = None, pt_output: Any = None) -> None:
        self.loaded = loaded
        self.agent = agent
        self.console = console
        self.renderer = renderer
        self.commands = Commands(self)
        self.pending_input: str | None = None
        self._pt_io = {"input": pt_input, "output": pt_output}
        self._session: Any = None
        self._last_ctrl_c = 0.0

    # -- input ----------------------------------------------------------------------------------
    def prompt_session(self) -> Any:
        if self._session is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory, InMemoryHistory

            from framework_core.config_load import user_data_dir
            from framework_core.ui.completion import LacaCompleter
            from framework_core.ui.statusline import status_fragments

            history: Any
            try:
                path = self.loaded.config.ui.history_file or str(user_data_dir() / "input_history")
                user_data_dir().mkdir(parents=True, exist_ok=True)
                history = FileHistory(path)
            except OSError:
                history = InMemoryHistory()
            self._session = PromptSession(
                history=history, completer=LacaCompleter(self), complete_while_typing=True,
                key_bindings=self._bindings(), bottom_toolbar=lambda: status_fragments(self.agent),
                enable_history_search=False, **self._pt_io)
        return self._session

    def _bindings(self) -> Any:
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()

        @kb.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @kb.add("c-c")
        def _ctrl_c(event: Any) -> None:
            buf = event.current_buffer
            if buf.text:
                buf.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt())

        return kb

    def prompt_message(self) -> Any:
        from prompt_toolkit.formatted_text import FormattedText

        parts = []
        if self.agent.teps.policy.allow_dangerous:
            parts.append(("ansired bold", "[ALLOW-DANGEROUS] "))
        if self.agent.teps.dry_run:
            parts.append(("ansiyellow bold", "[dry-run] "))
        parts.append(("bold", f"{self.agent.persona_id}> "))
        return FormattedText(parts)

    def read(self) -> str:
        if self.pending_input is not None:
            text, self.pending_input = self.pending_input, None
            self.console.print(Text(f"{self.agent.persona_id}> ", style="bold") + Text(text))
            return text
        return self.prompt_session().prompt(self.prompt_message())

    # -- loop -----------------------------------------------------------------------------------
    def banner(self) -> None:
        p = self.agent.provider
        self.console.print(Text.assemble(("LACA", "bold"), f" · {self.agent.provider_name} · {p.model} · persona ",
                                         (self.agent.persona_id, "bold"), f" · workspace {self.loaded.workspace}"))
        self.console.print(Text("Type a message, /help for commands, Ctrl-D to quit. Tools always show what they "
                                "will do; anything that changes your system asks first.", style="laca.dim"))

    def run(self) -> int:
        self.banner()
        self.agent.warm_up()
        try:
            while True:
                try:
                    text = self.read()
                except KeyboardInterrupt:
                    now = time.monotonic()
                    if now - self._last_ctrl_c < DOUBLE_CTRL_C_S:
                        break
                    self._last_ctrl_c = now
                    self.console.print(Text("(Ctrl-C again or Ctrl-D to exit)", style="laca.dim"))
                    continue
                except EOFError:
                    break
                self._last_ctrl_c = 0.0
                try:
                    self.handle(text)
                except ExitRepl:
                    break
        finally:
            self.shutdown()
        return 0

    def handle(self, text: str) -> None:
        if not text.strip():
            return
        try:
            if text.lstrip().startswith("/"):
                self.slash(text.strip())
            else:
                self.send(text)
        except ExitRepl:
            raise
        except KeyboardInterrupt:
            self.renderer.pause()
            self.agent.session.repair()
            self.console.print(Text("Interrupted.", style="laca.warn"))
        except LacaError as exc:
            self.renderer.pause()
            self.console.print(Text(f"error: {exc}", style="laca.err"))
        except Exception as exc:  # a bug must not end the session or lose the conversation
            self.renderer.pause()
            self.agent.session.repair()
            self.console.print(Text(f"internal error: {type(exc).__name__}: {exc}. The session goes on; please "
                                    "report this.", style="laca.err"))

    def slash(self, text: str) -> None:
        name, arg = split(text)
        cmd = lookup(name)
        if cmd is None:
            raise LacaError(f"unknown command /{name}. Type /help for the list.")
        cmd.handler(self, arg)

    def send(self, text: str) -> None:
        from framework_core.ui.completion import expand_attachments

        message, notes = expand_attachments(text, self.loaded.workspace, self.loaded.config.ui.attach_max_bytes)
        for note in notes:
            self.console.print(Text(note, style="laca.dim"))
        self.agent.run_turn(message)
        from framework_core.compaction import maybe_compact

        note = maybe_compact(self.agent)
        if note:
            self.console.print(Text(note, style="laca.dim"))

    def shutdown(self) -> None:
        self.renderer.pause()
        if self.agent.mcp is not None:
            self.agent.mcp.close()
        if self.agent.session.transcript is not None:
            self.agent.session.transcript.close()
        self.console.print(Text(f"Session saved: {self.agent.session.session_id} (resume with laca --continue)",
                                style="laca.dim"))
