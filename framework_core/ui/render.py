"""EventRenderer: turns core events into terminal output. It renders; it does not execute."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from framework_core.wording import STOPPED, STOPPED_HERE
from framework_core.ui.safe_text import visible, visible_output_line
from framework_core.wording import plural, size_words

if TYPE_CHECKING:  # the events are only named in annotations; the REPL imports this module before its prompt
    from framework_core.core.events import (AssistantMessageDone, AssistantReasoningDelta, AssistantTextDelta,
                                            CoreEvent, ModelRequestStarted, Notice, Preparing, RetryScheduled,
                                            ToolCallFinished, ToolCallQueued, ToolCallStarted, ToolOutputChunk,
                                            TurnFinished)
    from framework_core.lial_core import ToolResult

NOTICE_STYLE = {"info": "laca.info", "warning": "laca.warn", "error": "laca.err"}
STATUS_MARK = {"success": ("✓", "laca.ok"), "error": ("✗", "laca.err"), "declined_by_user": ("⊘", "laca.warn"),
               "blocked_by_policy": ("⛔", "laca.err"), "dry_run": ("◌", "laca.info")}


def one_line(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


RULE = re.compile(r"^rule (.+?) \((.*)\)$")
ALLOWED = {"read-only by construction": "allowed: Safe (reads only)",
           "reads inside the workspace": "allowed: reads a file inside the workspace",
           "a saved output of this session": "allowed: reads a saved output of this session",
           "configured permission: always": "allowed: the tool is configured `always`",
           "auto · sandboxed": "allowed by auto mode · sandboxed"}


def allowed_by(reason: str) -> str:
    """What let a call run without a question, in the words the user set it up with: the rule and its file, the
    session grant, the mode, or the policy's Safe reading (core/fate.py gives the reason)."""
    import os

    if reason.startswith(("you ", "dry run")):
        return reason
    if reason in ALLOWED:
        return ALLOWED[reason]
    rule = RULE.match(reason)
    if rule:
        name, source = rule.groups()
        if source == "--allow":
            return f"allowed by {name}"
        home = os.path.expanduser("~")
        if home not in ("", "/") and source.startswith(home + os.sep):
            source = "~" + source[len(home):]
        return f"allowed by rule `{name}` ({source})"
    if reason.startswith("session grant #"):
        return "allowed by " + reason
    mode = re.match(r"^([\w-]+ mode): (.+)$", reason)
    if mode:
        return f"allowed by {mode.group(1)} ({mode.group(2)})"
    return f"allowed: {reason}"


class Spinner:
    """A transient spinner with elapsed seconds, shown until the first token arrives."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._live: Any = None
        self._start = 0.0
        self.label = ""

    def start(self, label: str) -> None:
        self.stop()
        if not self.console.is_terminal:
            return
        from rich.live import Live
        from rich.spinner import Spinner as RichSpinner

        self._start, self.label = time.monotonic(), label
        self._spinner = RichSpinner("dots", text=self._text())
        self._live = Live(console=self.console, transient=True, refresh_per_second=8,
                          get_renderable=self._renderable, redirect_stdout=False, redirect_stderr=False)
        self._live.__enter__()

    def _text(self) -> Text:
        return Text(f"{self.label} {time.monotonic() - self._start:4.1f}s  (Esc to stop)", style="laca.dim")

    def _renderable(self) -> Any:
        self._spinner.text = self._text()
        return self._spinner

    def stop(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.__exit__(None, None, None)


class EventRenderer:
    """The UI's event sink. `screen_lines` caps live command output per call."""

    def __init__(self, console: Console, *, screen_lines: int = 20) -> None:
        self.console = console
        self.screen_lines = screen_lines
        self.spinner = Spinner(console)
        self.code_theme: str | None = None  # config.ui.code_theme, set once the configuration is loaded
        self._md: Any = None
        self._out_lines = 0
        self._out_partial = ""
        self._out_hidden = 0
        self._reasoning_open = False  # dim reasoning text is being written
        self._reasoning_eol = True  # ... and its last character was a newline
        self.last_call: ToolCallFinished | None = None  # /last shows its whole output

    def __call__(self, event: CoreEvent) -> None:
        handler = getattr(self, "_on_" + type(event).__name__, None)
        if handler is not None:
            handler(event)

    # -- model output ---------------------------------------------------------------------------
    def _on_ModelRequestStarted(self, ev: ModelRequestStarted) -> None:
        self.spinner.start(f"{ev.provider} · {ev.model} thinking")

    def _on_Preparing(self, ev: Preparing) -> None:
        self.pause()
        self.spinner.start(f"preparing {ev.what}…")

    def _on_AssistantReasoningDelta(self, ev: AssistantReasoningDelta) -> None:
        """Reasoning streams as plain dim text, apart from the reply, which starts on a line of its own."""
        self.spinner.stop()
        if self._md is not None:
            self._md.finish()
            self._md = None
        if not self._reasoning_open and not ev.text.strip():
            return
        self._reasoning_open, self._reasoning_eol = True, ev.text.endswith("\n")
        shown = Text(visible(ev.text), style="laca.dim")
        shown.stylize("italic")  # a theme name and an attribute do not combine in one style string
        self.console.print(shown, end="", soft_wrap=True)

    def _end_reasoning(self) -> None:
        if self._reasoning_open:
            self._reasoning_open = False
            self.console.print("" if self._reasoning_eol else "\n", end="")

    def _on_AssistantTextDelta(self, ev: AssistantTextDelta) -> None:
        self.spinner.stop()
        self._end_reasoning()
        if self._md is None:
            from framework_core.ui.markdown_stream import MarkdownStream

            self._md = (MarkdownStream(self.console, code_theme=self.code_theme) if self.code_theme
                        else MarkdownStream(self.console))
        self._md.feed(ev.text)

    def _on_AssistantMessageDone(self, ev: AssistantMessageDone) -> None:
        self.spinner.stop()
        self._end_reasoning()
        md, self._md = self._md, None
        if md is not None:
            if ev.cut_off:
                md.abort("[reply cut off]" if ev.message.meta.get("cut_off") else "[interrupted]")
            else:
                md.finish()

    def pause(self) -> None:
        """Stop anything live (spinner, open Markdown) before another component takes the terminal."""
        self.spinner.stop()
        self._end_reasoning()
        if self._md is not None:
            self._md.finish()
            self._md = None

    # -- tools ----------------------------------------------------------------------------------
    def _on_ToolCallQueued(self, ev: ToolCallQueued) -> None:
        self.pause()

    def _on_ToolCallStarted(self, ev: ToolCallStarted) -> None:
        self.pause()
        self._out_lines, self._out_partial, self._out_hidden = 0, "", 0
        line = Text("⏺ ", style="laca.tool")
        line.append(visible(ev.title), style="laca.tool")
        body = (ev.body or "").strip()
        if body and "\n" not in body:
            line.append("  " + visible(body), style="bold")
        why = Text("")
        if ev.auto_approved:  # every call that runs without a question says what allowed it
            why = Text(f"({visible(allowed_by(ev.reason))})" if ev.reason else "(auto)", style="laca.dim")
        if why and line.cell_len + why.cell_len + 3 > self.console.width:
            self.console.print(line)  # its own row: the rule, grant or mode is never cut off
            self.console.print(Text("  ") + why)
        else:
            self.console.print(line + Text("   ") + why if why else line)
        if body and "\n" in body and ev.title.startswith("Run command"):
            for row in body.splitlines():  # every line of what runs, never an empty title
                self.console.print(Text("  ┆ " + visible(row), style="bold"))
        elif body and "\n" in body and ev.reason.startswith("dry run"):
            self._dry_run_body(body)
        if ev.title.startswith("Run command") and not ev.reason.startswith("dry run: shown"):
            self.spinner.start("running")  # a quiet command still shows that it runs, and for how long

    def _dry_run_body(self, body: str) -> None:
        """What a call would have done in a dry run (a write's diff), folded."""
        rows = body.splitlines()
        for row in rows[:DRY_RUN_ROWS]:
            self.console.print(Text("  ┆ " + visible(row), style="laca.dim"), no_wrap=True, overflow="ellipsis")
        if len(rows) > DRY_RUN_ROWS:
            self.console.print(Text(f"  ┆ … {plural(len(rows) - DRY_RUN_ROWS, 'more line')}", style="laca.dim"))

    def _on_ToolOutputChunk(self, ev: ToolOutputChunk) -> None:
        text = self._out_partial + ev.text
        lines = text.split("\n")
        self._out_partial = _bounded_partial(lines.pop())
        for line in lines:
            self._emit_output_line(line)

    def _emit_output_line(self, line: str) -> None:
        self._out_lines += 1
        if self._out_lines <= self.screen_lines:
            self._print_output_line(line)
        else:
            self._out_hidden += 1

    def _print_output_line(self, line: str) -> None:
        """One screen row per output line, cut with an ellipsis: a long line must not fill the screen."""
        self.console.print(Text.assemble(("  │ ", "laca.dim"), output_text(line[:2000], 400)), no_wrap=True,
                           overflow="ellipsis")

    def _on_ToolCallFinished(self, ev: ToolCallFinished) -> None:
        self.spinner.stop()
        self.last_call = ev
        if self._out_partial:
            self._emit_output_line(self._out_partial)
            self._out_partial = ""
        if self._out_hidden:
            tail = (ev.result.data.get("stdout") or "").rstrip("\n").splitlines()[-3:]
            hidden = ("more output not shown" if ev.result.data.get("full_output_path")
                      else f"{plural(self._out_hidden, 'line')} not shown")
            self.console.print(Text(f"  │ … {hidden} …", style="laca.dim"))
            for line in tail:
                self._print_output_line(line)
        mark, style = STATUS_MARK.get(ev.result.status, ("•", "laca.dim"))
        if ev.result.status == "blocked_by_policy":
            self._blocked(ev)
        else:
            line = Text(f"  {mark} ", style=style)
            line.append(visible(summarise_result(ev.result)), style=style)
            if ev.result.status in ("success", "error") or ev.duration_s >= 0.01:  # not for calls that never ran
                line.append(f"  · {ev.duration_s:.2f}s", style="laca.dim")
            if ev.note:  # how it ran, when that is news: an auto-run and the /undo that reverts it
                line.append(f"  · {visible(ev.note)}", style="laca.info")
            self.console.print(line)
        if ev.result.data.get("sandbox"):
            self.console.print(Text(f"  ⛶ sandbox: {visible(str(ev.result.data['sandbox']))}", style="laca.warn"))
        self._out_lines = self._out_hidden = 0

    def _blocked(self, ev: ToolCallFinished) -> None:
        """A blocked call, said once: what it was, and each of the policy's reasons on its own line."""
        what = str(ev.request.parameters.get("command") or ev.request.parameters.get("path") or ev.request.tool_name)
        line = Text("⛔ Blocked ", style="laca.err") + Text(visible(one_line(what, 100)), style="bold")
        self.console.print(line)
        reasons = ev.result.data.get("reasons") or [ev.result.data.get("message") or "blocked by policy"]
        for reason in reasons[:6]:
            self.console.print(Text(f"  – {visible(str(reason))}", style="laca.err"))
        if "/allow-dangerous" in str(ev.result.data.get("message", "")):
            self.console.print(Text("  Dangerous commands stay blocked until /allow-dangerous on (each then asks).",
                                    style="laca.dim"))

    # -- status ---------------------------------------------------------------------------------
    def _on_RetryScheduled(self, ev: RetryScheduled) -> None:
        self.pause()
        self.console.print(Text(f"⟳ {ev.reason}; retrying in {ev.delay_s:.1f}s (attempt {ev.attempt + 1} of "
                                f"{ev.max_attempts}). Ctrl-C cancels.", style="laca.warn"))

    def _on_Notice(self, ev: Notice) -> None:
        self.pause()
        prefix = {"info": "", "warning": "warning: ", "error": "error: "}[ev.level]
        # A notice with an address (an MCP sign-in) is left to the terminal's own wrapping: an address cut by
        # hard line breaks cannot be copied whole.
        self.console.print(Text(prefix + visible(ev.text), style=NOTICE_STYLE[ev.level]),
                           soft_wrap="://" in ev.text)

    def _on_TurnFinished(self, ev: TurnFinished) -> None:
        self._end_reasoning()
        if self._md is not None:
            md, self._md = self._md, None
            md.abort("[interrupted]") if ev.interrupted else md.finish()
        self.spinner.stop()
        if ev.interrupted:
            self.console.print(Text("Interrupted. The conversation is intact; go on when ready.", style="laca.warn"))
        elif ev.stopped:
            self.console.print(Text("Stopped. Tell the model what to do instead.", style="laca.dim"))


DRY_RUN_ROWS = 30
SGR = re.compile(r"\x1b\[[0-9;]*m")


def output_text(line: str, width: int | None = None) -> Text:
    """A line of command output as rich Text: its colours (SGR sequences) kept as colours; every other
    control character shown, never obeyed."""
    if "\x1b[" not in line:
        shown = visible_output_line(line)
        return Text(shown[:width] if width else shown, style="laca.dim")
    pieces, last = [], 0
    for m in SGR.finditer(line):
        pieces += [visible_output_line(line[last:m.start()]), m.group(0)]
        last = m.end()
    pieces.append(visible_output_line(line[last:]))
    text = Text.from_ansi("".join(pieces), no_wrap=True)
    if width:
        text.truncate(width)
    return text


PARTIAL_CAP = 4000  # a line is shown cut at 400 characters; keep enough of an unfinished one, no more


def _bounded_partial(partial: str) -> str:
    """An unfinished output line, kept small: output without newlines (progress bars, minified data) can
    go on for megabytes, and re-joining it on every chunk would cost time quadratic in its length."""
    cr = partial.rfind("\r", 0, len(partial) - 1)
    if cr >= 0:
        partial = partial[cr + 1:]  # a progress bar: only its latest state is shown
    return partial[:PARTIAL_CAP]


def summarise_result(result: ToolResult) -> str:
    d = result.data
    if result.status == "success" or (result.status == "error" and isinstance(d.get("exit_code"), int)):
        if "exit_code" in d:
            extra = " (timed out)" if d.get("timed_out") else ""
            if d.get("full_output_path"):
                return (f"exit {d['exit_code']}{extra} · {size_words(d.get('output_bytes', 0))} of output, "
                        f"saved in full to {d['full_output_path']}")
            lines = (d.get("stdout") or "").count("\n") + (d.get("stderr") or "").count("\n")
            if not lines and (d.get("stdout") or d.get("stderr")):
                lines = 1  # output without a final newline is still a line
            output = f"{plural(lines, 'line')} of output" if lines else "no output"
            changes = f" · {d['changes']}" if d.get("changes") else ""
            return f"exit {d['exit_code']}{extra} · {output}{changes}"
        if "bytes_written" in d:
            return f"wrote {plural(d['bytes_written'], 'byte')} to {d.get('file_path', '')}"
        if "content" in d and "file_path" in d:
            return f"read {plural(str(d['content']).count(chr(10)), 'line')} from {d['file_path']}"
        if "content" in d:
            return one_line(str(d["content"]) or "(no content)", 120)
        if d.get("message") and "file_path" in d:  # an edit: what changed, in its own words
            return one_line(str(d["message"]), 160)
        return "done"
    if result.status == "dry_run":
        return "dry run: shown above, not made; nothing changed"
    if d.get("message") in (STOPPED_HERE, STOPPED):
        return "declined: you stopped the turn" if d["message"] == STOPPED_HERE else "not run: the turn was stopped"
    if d.get("mode") == "plan":
        return f"not run (plan mode): {one_line(str(d.get('would_run', '')), 100)}"
    return one_line(str(d.get("error_message") or d.get("message") or result.status), 160)
