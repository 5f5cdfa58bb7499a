"""The interactive REPL: prompt_toolkit input, rich output, slash commands, Ctrl-C / Ctrl-D handling."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from framework_core.errors import LacaError
from framework_core.ui.boot import Boot, peek_persona
from framework_core.ui.slash import POINTERS, is_command, lookup, near_misses, split

if TYPE_CHECKING:
    from framework_core.core.facade import Facade
    from framework_core.core.options import StartOptions
    from framework_core.ui.boot import Launcher
    from framework_core.ui.render import EventRenderer

DOUBLE_CTRL_C_S = 2.0


def elicitor(console: Console, pause: Any) -> Any:
    """The terminal form for MCP servers' requests for input (asked during a tool call, on the main thread)."""
    from framework_core.ui.elicit_form import answer_form
    from framework_core.ui.keys import ask_key, ask_line

    def answer(params: Any) -> Any:
        pause()
        return answer_form(params, console, ask_key, ask_line)
    return answer


def run_repl(opts: "StartOptions", launcher: "Launcher") -> int:
    from framework_core.ui.boot import Boot, Started
    from framework_core.ui.console import make_console
    from framework_core.ui.render import EventRenderer

    console = make_console()
    renderer = EventRenderer(console)
    if sys.stdin.isatty():
        from framework_core.ui.trust_prompt import review_workspace

        review_workspace(Path.cwd(), opts.overrides, console)
        ask_provider(opts, console, launcher)

    def build(o: "StartOptions") -> Started:
        from framework_core.ui.approver import TerminalApprover

        approver = TerminalApprover(console, pause=renderer.pause)
        started = launcher.start_session(o, events=renderer, approver=approver, require_key=False,
                                         elicit=elicitor(console, renderer.pause))  # no key: it opens and says so
        renderer.screen_lines = started.facade.screen_output_lines
        renderer.code_theme = started.facade.ui.code_theme
        # the tools and the SDK get ready once the user starts typing (Repl.warm_provider): an idle prompt
        # holds neither, and typing a message takes longer than both
        return started

    repl = Repl(None, console, renderer, boot=Boot(opts, build), launcher=launcher)
    repl.pending_input = opts.message  # `laca "fix the failing test"` starts with that message
    return repl.run()


def ask_provider(opts: "StartOptions", console: Console, launcher: "Launcher") -> None:
    """Several API keys set and none for the default provider: ask which one to use (before the prompt)."""
    from framework_core.ui.keys import ask_key

    keyed = launcher.providers_to_ask(opts)
    if not keyed:
        return
    console.print(Text("Several API keys are set and none is chosen in your config. Use which provider?", style="bold"))
    for n, name in enumerate(keyed[:9], start=1):
        console.print(Text(f"  [{n}] {name}"))
    digits = "".join(str(n) for n in range(1, min(len(keyed), 9) + 1))
    try:
        key = ask_key(f"Pick 1-{digits[-1]}, then Enter (Enter alone: {keyed[0]}): ", digits, default="1", guard_s=0)
    except (KeyboardInterrupt, EOFError):
        key = "1"
    opts.overrides.provider = keyed[int(key) - 1]
    console.print(Text(f"Using {opts.overrides.provider}. Make it permanent with llm_provider: "
                       f"{opts.overrides.provider} in ~/.config/laca/config.yaml.", style="laca.dim"))


class Repl:
    def __init__(self, facade: "Facade | None", console: Console, renderer: "EventRenderer", *,
                 pt_input: Any = None, pt_output: Any = None, boot: "Boot | None" = None,
                 launcher: "Launcher | None" = None) -> None:
        self._facade = facade
        self.boot = boot
        self.launcher = launcher
        self.persona_hint = peek_persona(boot.opts) if boot is not None else "forge"
        self.console = console
        self.renderer = renderer
        self._commands: Any = None
        self.pending_input: str | None = None
        self._pt_io = {"input": pt_input, "output": pt_output}
        self._session: Any = None
        self._last_ctrl_c = 0.0
        from framework_core.ui.prompt_keys import Pastes

        self.pastes = Pastes()  # long pastes shown collapsed in the input box
        self.typed_meanwhile = ""
        self._provider_warmed = False

    @property
    def commands(self) -> Any:
        if self._commands is None:
            from framework_core.ui.commands import Commands

            self._commands = Commands(self)
        return self._commands

    # -- the agent, built in the background -------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._facade is not None or (self.boot is not None and self.boot.done)

    def _resolve(self, idle: bool = False) -> None:
        if self._facade is None:
            assert self.boot is not None, "a Repl needs a façade or a Boot"
            started = self.boot.result()
            self._facade = started.facade
            if idle and self._provider_warmed:  # typing began before the session was ready and goes on: warm now
                self._facade.warm_up(provider=True)  # (a message already sent needs the SDK at once, in the turn)
            for note in started.notes:  # a (text, style) pair for what is not a warning (a resumed session's recap)
                text, style = note if isinstance(note, tuple) else (note, "laca.warn")
                self.console.print(Text(text, style=style))

    @property
    def facade(self) -> "Facade":
        """The conversation: waits for the background start when it is still under way."""
        self._resolve()
        assert self._facade is not None
        return self._facade

    @property
    def started(self) -> "Facade | None":
        """The façade once the background start has finished and been shown, else None (never waits)."""
        return self._facade

    def _start_boot(self) -> None:
        """pre_run hook of the first prompt: start building once the prompt is drawn."""
        if self.boot is None or self.boot.started:
            return
        from prompt_toolkit.application import get_app

        app = get_app()
        loop = app.loop

        def finished(error: BaseException | None) -> None:
            if loop is None or loop.is_closed():
                return  # the first message was sent before the build ended; sending it waits for the result
            from framework_core.ui.boot import BootFailed

            try:
                if error is not None:
                    loop.call_soon_threadsafe(lambda: app.is_running and app.exit(exception=BootFailed(error)))
                else:
                    loop.call_soon_threadsafe(lambda: self._boot_done(app))
            except RuntimeError:  # the loop closed between the check and the call: same as above
                pass

        boot = self.boot
        if loop is not None:
            loop.call_later(0.03, lambda: boot.start(finished))
        else:
            boot.start(finished)

    def _boot_done(self, app: Any) -> None:
        """On the prompt's loop: show start-up notices above the prompt, then redraw the status line."""
        if not app.is_running or self._facade is not None:
            return
        if self.boot is not None and self.boot.has_warnings:
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(lambda: self._resolve(idle=True))  # schedules itself on the running app
        else:
            self._resolve(idle=True)
            app.invalidate()

    # -- input ----------------------------------------------------------------------------------
    def prompt_session(self) -> Any:
        if self._session is None:
            from prompt_toolkit import PromptSession

            from framework_core.config.dirs import user_data_dir
            from framework_core.ui.completion import LacaCompleter
            from framework_core.ui.input_history import make_history

            history = make_history(user_data_dir())  # memory only when the disk refuses it, never a traceback
            from framework_core.ui.prompt_keys import quick_escape, repl_bindings

            self._session = PromptSession(
                history=history, completer=LacaCompleter(self), complete_while_typing=True,
                key_bindings=repl_bindings(self, self.pastes), bottom_toolbar=self._toolbar,
                enable_history_search=False, **self._pt_io)
            quick_escape(self._session.app)
            self._session.default_buffer.on_text_changed += self.warm_provider
            from framework_core.ui.idle_notices import watch_idle_notices

            watch_idle_notices(self._session.app, lambda: self._facade, self.renderer)  # MCP news while idle
        return self._session

    def warm_provider(self, *_: Any) -> None:
        """Get the tools ready and import the provider's SDK in the background once the user starts typing (or
        a message is waiting): together they are most of LACA's memory, so an idle prompt does without them,
        and typing a message takes longer than both."""
        if self._provider_warmed:
            return
        self._provider_warmed = True
        if self._facade is not None:  # else the session is still being built: `_resolve` warms it when it is
            self._facade.warm_up(provider=True)

    def _toolbar(self) -> Any:
        from framework_core.ui.statusline import status_fragments

        if not self.ready or (self._facade is None and self.boot is not None and self.boot.failed):
            return " starting… "
        return status_fragments(self.facade.status())

    def prompt_message(self) -> Any:
        from prompt_toolkit.formatted_text import FormattedText

        if not self.ready or self._facade is None:
            return FormattedText([("bold", f"{self.persona_hint}> ")])
        status = self._facade.status()
        parts = []
        if status.allow_dangerous:
            parts.append(("ansired bold", "[ALLOW-DANGEROUS] "))
        if status.dry_run:
            parts.append(("ansiyellow bold", "[dry-run] "))
        if status.mode != "ask":
            parts.append(("ansimagenta bold", f"[{status.mode}] "))
        parts.append(("bold", f"{status.persona}> "))
        return FormattedText(parts)

    def read(self) -> str:
        if self.pending_input is not None:
            self.warm_provider()
            text, self.pending_input = self.pending_input, None
            self.console.print(Text(f"{self.facade.persona}> ", style="bold") + Text(text))
            return text
        typed, self.typed_meanwhile = self.typed_meanwhile, ""  # keys typed while the last turn ran
        text = self.prompt_session().prompt(self.prompt_message, pre_run=self._start_boot, default=typed)
        take = getattr(self.prompt_session().history, "take_warning", None)
        warning = take() if take is not None else None
        if warning:
            self.console.print(Text(warning, style="laca.err"))
        return self.pastes.expand(text)

    # -- loop -----------------------------------------------------------------------------------
    def banner(self) -> None:
        import os

        self.console.print(Text.assemble(("LACA", "bold"), f" · workspace {os.getcwd()} · the status line below shows "
                                         "provider, model and tokens"))
        self.console.print(Text("Type a message, /help for commands, Ctrl-D to quit. Tools always show what they "
                                "will do; anything that changes your system asks first.", style="laca.dim"))

    def run(self) -> int:
        from framework_core.ui.boot import BootFailed

        self.banner()
        from framework_core.ui.commands import ExitRepl

        try:
            while True:
                try:
                    text = self.read()
                except BootFailed as exc:
                    code = self._boot_failed(exc.error)
                    if code is not None:
                        return code
                    continue
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
                except BootFailed as exc:
                    code = self._boot_failed(exc.error)
                    if code is not None:
                        return code
        finally:
            self.shutdown()
        return 0

    def _boot_failed(self, error: BaseException) -> int | None:
        """Report a failed start. Returns an exit code, or None when the user fixed it (local server picked)."""
        import sys

        from framework_core.errors import LacaError, MissingApiKeyError

        self._session = None
        if isinstance(error, MissingApiKeyError) and self.boot is not None and self.launcher is not None:
            if self.launcher.onboard(self.boot.opts, error, interactive=sys.stdin.isatty()):
                self.boot.restart()
                return None
            return 2
        from framework_core.core.session import SessionBusy

        if isinstance(error, SessionBusy) and self.boot is not None:
            print(f"laca: {error}", file=sys.stderr)
            if sys.stdin.isatty() and input("Fork it into a new session? [y/N] ").strip().lower() in ("y", "yes"):
                self.boot.opts.fork = True
                self.boot.restart()
                return None
            return error.exit_code
        if isinstance(error, LacaError):
            print(f"laca: {error}", file=sys.stderr)
            return error.exit_code
        print(f"laca: internal error while starting: {type(error).__name__}: {error}", file=sys.stderr)
        return 1

    def handle(self, text: str) -> None:
        from framework_core.ui.boot import BootFailed
        from framework_core.ui.commands import ExitRepl

        if not text.strip():
            return
        try:
            if is_command(text):
                self.slash(text.strip())
            elif text.startswith("!") and text[1:].strip():
                self.shell(text[1:].strip())
            else:
                self.send(text.lstrip()[1:] if text.lstrip().startswith("//") else text)
        except (ExitRepl, BootFailed):
            raise
        except KeyboardInterrupt:
            self.renderer.pause()
            self.facade.repair_history()
            self.console.print(Text("Interrupted.", style="laca.warn"))
        except LacaError as exc:
            self.renderer.pause()
            self.console.print(Text(f"error: {exc}", style="laca.err"))
        except Exception as exc:  # a bug must not end the session or lose the conversation
            self.renderer.pause()
            self.facade.repair_history()
            self.console.print(Text(f"internal error: {type(exc).__name__}: {exc}. The session goes on; please "
                                    "report this.", style="laca.err"))

    def slash(self, text: str) -> None:
        name, arg = split(text)
        cmd = lookup(name, self.facade)
        if cmd is None and name in POINTERS:
            self.console.print(Text(f"/{name}: {POINTERS[name]}", style="laca.dim"))
            return
        if cmd is None:
            guesses = near_misses(name, facade=self.facade)
            hint = (f"Did you mean {' or '.join('/' + g for g in guesses)}?" if guesses
                    else "Type /help for the list.")
            if name.startswith("mcp__"):
                hint += " An MCP server's prompts are commands once the server is ready (/mcp shows it)."
            raise LacaError(f"unknown command /{name}. {hint} (To send a message that starts with /, begin it "
                            "with //.)")
        cmd.handler(self, arg)

    def send(self, text: str) -> None:
        from framework_core.ui.completion import expand_attachments

        message, notes = expand_attachments(text, self.facade.workspace, self.facade.ui.attach_max_bytes,
                                            self.facade)
        for note in notes:
            self.console.print(Text(note, style="laca.warn" if "not attached" in note else "laca.dim"))
        from framework_core.ui.keys import EscWatcher

        from framework_core.ui.more_commands import notify_done

        started = time.monotonic()
        watcher = EscWatcher()
        try:
            with watcher:  # Esc stops the reply or the command, as Ctrl-C does
                self.facade.turn(message)
        finally:  # after the watcher stopped reading: a line typed as the turn ends is taken whole
            self.keep_typed(watcher)
        notify_done(self.console, started)  # a bell (or a desktop notice) after a long reply

    def keep_typed(self, watcher: Any) -> None:
        """Keys typed while a turn ran wait in the next prompt as an editable draft, Enters included: nothing
        typed before that prompt was drawn is ever sent, so a "y" and Enter typed while the model thinks can
        never reach it as an answer to whatever it asked last."""
        lines, rest = watcher.take_text()
        self.typed_meanwhile = "\n".join([*lines, rest]).strip("\n")

    def shell(self, command: str) -> None:
        """`!cmd`: run a command yourself, in the sandbox (Esc or Ctrl-C stops it)."""
        from framework_core.ui.keys import EscWatcher

        watcher = EscWatcher()
        try:
            with watcher:
                self.facade.run_user_command(command)
        finally:
            self.keep_typed(watcher)
        self.console.print(Text("The model sees this command and its output with your next message.",
                                style="laca.dim"))

    def shutdown(self) -> None:
        self.renderer.pause()
        if self._facade is None:
            return
        from framework_core.wording import invocation

        closed = self._facade.close()  # writes what waits; never claims a save that did not happen
        if closed.problem is None:
            self.console.print(Text(f"Session saved: {closed.session_id} (resume with "
                                    f"{invocation('--continue')})", style="laca.dim"))
        else:
            self.console.print(Text(f"Session NOT saved: {closed.problem}", style="laca.err"))
