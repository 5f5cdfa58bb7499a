"""TerminalApprover: shows the ICERC panel and asks [y/n/a]. Approval wraps execution; this is its face."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.syntax import Syntax
from rich.text import Text

from framework_core.core.approval import ApprovalAnswer, ApprovalRequest, GrantOption
from framework_core.policy.levels import Level
from framework_core.ui.approval_view import fitted_panel, panel_rows, question_keys, question_text
from framework_core.ui.keys import DEFAULT_GUARD_S, ask_key, ask_line
from framework_core.ui.safe_text import visible


class TerminalApprover:
    def __init__(self, console: Console, *, pause: Any = None, pt_input: Any = None, pt_output: Any = None,
                 guard_s: float = DEFAULT_GUARD_S) -> None:
        self.console = console
        self._pause = pause or (lambda: None)
        self._io = {"pt_input": pt_input, "pt_output": pt_output}
        self.guard_s = guard_s

    def approve(self, req: ApprovalRequest) -> ApprovalAnswer:
        self._pause()
        width, height = self.console.size
        question = question_text(req, width)
        self.console.print(fitted_panel(req, self.console, panel_rows(question, height)))
        dangerous = req.level == Level.DANGEROUS
        while True:
            key = ask_key(question, question_keys(req), default="n" if dangerous else None, esc="esc",
                          actions={"v": lambda: self._view_all(req)}, guard_s=self.guard_s, **self._io)
            if key == "y":
                self.console.print(Text("Allowed once.", style="laca.ok"))
                return ApprovalAnswer("once")
            if key == "r":
                self.console.print(Text(f"Allowed this and the {req.remaining} remaining call(s) of this reply that "
                                        "ask, once each.", style="laca.ok"))
                return ApprovalAnswer("once", remaining=True)
            if key == "w":
                self.console.print(Text("Allowed once, in the sandbox WITH the network (what it sends cannot be "
                                        "undone).", style="laca.warn"))
                return ApprovalAnswer("once", network=True)
            if key == "p":
                self.console.print(Text("Running it in the sandbox's overlay; you will see the changes before "
                                        "anything lands.", style="laca.info"))
                return ApprovalAnswer("once", preview=True)
            if key == "u":
                if self._confirm_unsandboxed():
                    return ApprovalAnswer("once", unsandboxed=True)
                continue
            if key == "esc":  # as Claude Code does: the next prompt is where the user says what to do instead
                rest = req.total - req.index
                after = f" and the {rest} call(s) after it" if rest else ""
                self.console.print(Text(f"Stopped: this call{after} will not run; the turn stops here.",
                                        style="laca.warn"))
                return ApprovalAnswer("deny", stop=True)
            if key == "n":
                reason = ask_line("Why not? (optional, sent to the model; Enter to skip): ", **self._io)
                self.console.print(Text("Declined.", style="laca.warn"))
                return ApprovalAnswer("deny", reason=reason)
            grant = self._pick_grant(req.grant_options)
            if grant is None:
                continue
            self.console.print(Text(f"Remembered for this session: {grant.label}  (/revoke to undo)", style="laca.ok"))
            return ApprovalAnswer("session", grant=grant)

    def review_changes(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        """Show what a previewed command changed and ask whether to apply it; the default is No."""
        return self._review(summary, diff, "Preview:", "cyan", "Apply these changes to the workspace?")

    def review_held(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        """Auto mode ran a command whose change set holds files that run with nothing named (a .pth, a
        folder-open task, .envrc): show it and ask before anything of it lands; the default is No."""
        return self._review(summary, diff, "Auto mode held this change set (files that run by themselves):",
                            "yellow", "Apply it, files that run by themselves included?")

    def _review(self, summary: str, diff: str, title: str, border: str, question: str) -> bool:
        from rich.panel import Panel

        self._pause()
        body = visible(diff) if diff else "(no diff to show)"
        self.console.print(Panel(Syntax(body, "diff", word_wrap=True, theme="ansi_dark", background_color="default"),
                                 title=f"[bold]{title}[/bold] {visible(summary)}", title_align="left",
                                 border_style=border))
        key = ask_key(f"{question} [y] apply  [n] discard (default) ", "yn", default="n",
                      guard_s=self.guard_s, **self._io)
        if key == "y":
            self.console.print(Text("Applied (/undo reverts it).", style="laca.ok"))
            return True
        self.console.print(Text("Discarded: the workspace is unchanged.", style="laca.warn"))
        return False

    def _confirm_unsandboxed(self) -> bool:
        """Leaving the sandbox is a second, explicit answer: never a default, never remembered."""
        self.console.print(Text("Run OUTSIDE the sandbox, this once: the command can then change any file you can, "
                                "read your credentials and use the network, and /undo cannot revert it.",
                                style="bold red"))
        key = ask_key("Really run it unconfined? [y/N] ", "yn", default="n", guard_s=self.guard_s, **self._io)
        if key == "y":
            self.console.print(Text("Allowed once, outside the sandbox.", style="bold red"))
            return True
        return False

    def _pick_grant(self, options: list[GrantOption]) -> GrantOption | None:
        if len(options) == 1:
            return options[0]
        self.console.print(Text("What should 'always' cover? Never wider than what you pick:", style="bold"))
        for n, opt in enumerate(options[:9], start=1):
            self.console.print(Text(f"  [{n}] {visible(opt.label)}"))
        digits = "".join(str(n) for n in range(1, min(len(options), 9) + 1))
        key = ask_key(f"Pick 1-{digits[-1]} (or x to go back): ", digits + "x", guard_s=0, **self._io)
        return None if key == "x" else options[int(key) - 1]

    def _view_all(self, req: ApprovalRequest) -> None:
        """Everything: the unfolded action, the whole brief and every reason, in a pager that shows colours."""
        body = visible(req.preview.full_body or req.preview.body or "")
        parts: list[Any] = [Text(visible(req.preview.title), style="bold")]
        parts.append(Syntax(body, req.preview.lexer, word_wrap=True) if req.preview.lexer else Text(body))
        parts.append(Text("\nThe model's brief (ICERC):", style="bold"))
        parts.append(Text(visible(req.request.icerc_full_text.strip()) or "(none)", style="italic"))
        parts.append(Text("\nEvery reason the policy gave:", style="bold"))
        parts += [Text(f"  – {visible(r)}") for r in req.reasons] or [Text("  (none)")]
        page(self.console, Group(*parts))


def page(console: Console, renderable: Any) -> None:
    """Show `renderable` in the user's pager with its colours (`less -R`); printed when there is no pager."""
    import os
    import shlex
    import shutil
    import subprocess

    argv = shlex.split(os.environ.get("PAGER") or "less")
    if not console.is_terminal or not argv or shutil.which(argv[0]) is None:
        console.print(renderable)
        return
    if os.path.basename(argv[0]) == "less" and not any(a.startswith("-") and "R" in a for a in argv[1:]):
        argv.append("-R")  # without it less shows colours as raw escape codes
    with console.capture() as captured:
        console.print(renderable)
    try:
        subprocess.run(argv, input=captured.get(), text=True, check=False)
    except OSError:
        console.print(renderable)
