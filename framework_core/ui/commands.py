"""What each slash command does. Table in slash.py; this module holds the behaviour."""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import TYPE_CHECKING

from rich.text import Text

from framework_core.errors import LacaError
from framework_core.wording import plural

if TYPE_CHECKING:
    from framework_core.core.facade import Facade
    from framework_core.ui.repl import Repl


class ExitRepl(Exception):
    """Raised by /exit."""


class Commands:
    def __init__(self, repl: "Repl") -> None:
        self.repl = repl

    @property
    def facade(self) -> "Facade":
        return self.repl.facade

    def say(self, text: str, style: str = "") -> None:
        self.repl.console.print(Text(text, style=style))

    # -- session ------------------------------------------------------------------------------
    def help(self, arg: str) -> None:
        from rich.table import Table  # here, not at the top: the REPL imports this module before its prompt

        from framework_core.ui.slash import TOPICS, all_commands

        commands = all_commands(self.facade)
        for topic, title in TOPICS.items():
            if not any(c.topic == topic for c in commands):
                continue
            table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
            for cmd in [c for c in commands if c.topic == topic]:
                table.add_row(f"/{cmd.name} {cmd.args}".strip(), cmd.help)
            self.repl.console.print(table)
        self.say("Keys: Enter sends · Ctrl-J, Alt+Enter or \\ Enter adds a line · Ctrl-G edits in $EDITOR · "
                 "Shift-Tab cycles modes (ask, accept edits, plan) · Ctrl-R searches history · @path attaches a "
                 "file · !cmd runs a command yourself · Esc or Ctrl-C stops a reply or a command · Ctrl-D quits",
                 "laca.dim")

    def exit(self, arg: str) -> None:
        raise ExitRepl()

    def clear(self, arg: str) -> None:
        from framework_core.ui.more_commands import new_session

        new_session(self.repl, arg)

    def sessions(self, arg: str) -> None:
        from framework_core.ui.sessions_view import format_sessions

        self.say(format_sessions(self.facade.workspace))
        self.say(f"This session: {self.facade.session_id}", "laca.dim")

    def edit(self, arg: str) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with tempfile.NamedTemporaryFile("w+", suffix=".md", delete=False) as fh:
            fh.write(arg)
            path = fh.name
        try:
            subprocess.run([*editor.split(), path], check=False)
            with open(path, encoding="utf-8") as fh:
                text = fh.read().strip()
        finally:
            os.unlink(path)
        if text:
            self.repl.pending_input = text
        else:
            self.say("Empty message; nothing sent.", "laca.dim")

    # -- model --------------------------------------------------------------------------------
    def persona(self, arg: str) -> None:
        if not arg:
            self.say(f"Persona: {self.facade.persona}. Available: {', '.join(self.facade.personas())}")
            return
        self.facade.set_persona(arg)
        self.say(f"Persona is now {arg}.", "laca.ok")

    def provider(self, arg: str) -> None:
        if not arg:
            self.say(f"Provider: {self.facade.provider_name} ({self.facade.provider_type} API, model "
                     f"{self.facade.model}). Available: {', '.join(self.facade.providers())}")
            return
        name, _, model = arg.partition(" ")
        self.facade.set_provider(name, model.strip() or None)
        self.say(f"Provider is now {name} ({self.facade.model}); the conversation is kept.", "laca.ok")

    def model(self, arg: str) -> None:
        facade = self.facade
        if not arg:
            self.say(facade.model_description())
            offered = facade.server_models(wait_s=5.0)
            if isinstance(offered, list):
                self.say(f"The server offers {len(offered)}: {', '.join(offered) or '-'}", "laca.dim")
            elif offered is not None:
                self.say(f"Could not list the server's models: {offered}", "laca.warn")
            self.say(f"Configured: {', '.join(facade.configured_models()) or '-'}. Switch with /model NAME "
                     "(Tab completes).", "laca.dim")
            return
        notes = facade.set_model(arg)
        offered = facade.server_models(wait_s=0.0)
        self.say(f"Model is now {facade.model_description()}", "laca.ok")
        for note in notes:
            self.say(note, "laca.warn")
        if isinstance(offered, list) and offered and arg not in offered:
            self.say(f"The server does not list '{arg}'; /model shows what it offers.", "laca.warn")

    def tokens(self, arg: str) -> None:
        self.say(self.facade.usage_report())

    def compact(self, arg: str) -> None:
        self.say(self.facade.compact())

    def context(self, arg: str) -> None:
        from rich.table import Table

        table = Table("document", "kind", "source", "≈tokens", box=None)
        total = 0
        for doc in self.facade.documents():
            table.add_row(doc.doc_id, doc.kind, str(doc.source), f"{doc.approx_tokens:,}")
            total += doc.approx_tokens
        self.repl.console.print(table)
        self.say(f"≈{total:,} tokens of context documents; active persona: {self.facade.persona}", "laca.dim")

    # -- tools --------------------------------------------------------------------------------
    def tools(self, arg: str) -> None:
        from framework_core.ui.tool_view import tool_detail, tool_table

        if arg.strip():
            name = arg.strip()
            self.repl.console.print(tool_detail(self.facade.tool(name), name, self.facade.tools()))
            return
        self.repl.console.print(tool_table(self.facade.tools()))
        self.say("/tools NAME shows a tool's description and parameters.", "laca.dim")

    def mcp(self, arg: str) -> None:
        from framework_core.ui.tool_view import mcp_table

        servers = self.facade.mcp_status()
        if servers is None:
            self.say("No MCP servers configured (mcp_servers: in framework_config.yaml, or a workspace .mcp.json).")
            return
        if arg.strip():
            from framework_core.ui.more_commands import mcp_sign_in

            mcp_sign_in(self.repl, arg.split())
            return
        self.repl.console.print(mcp_table(servers))
        from framework_core.ui.mcp_commands import catalog_lines

        for line in catalog_lines(self.facade):
            self.say(line)
        self.say("/mcp login NAME signs in to a server that asks for it; /mcp logout NAME forgets its tokens.",
                 "laca.dim")

    def undo(self, arg: str) -> None:
        """Revert the newest change(s), a command's or a file write's; asks before overwriting later edits."""
        facade = self.facade
        arg = arg.strip()
        if arg.startswith("#") and arg[1:].isdigit():  # a change's own number: undo back to it, newest first
            ids = [int(e.id) for e in facade.changes()]
            if int(arg[1:]) not in ids:
                raise LacaError(f"/undo {arg}: no such change left to undo (/changes lists them with their #)")
            arg = str(ids.index(int(arg[1:])) + 1)
        if arg and not arg.isdigit():
            raise LacaError("usage: /undo [N | #C]  (N: how many of the newest changes; #C: back to change C; "
                            "/changes lists them)")
        if not facade.changes():
            aside = facade.undo_set_aside()
            if aside:
                self.say(f"Nothing left to undo: {plural(aside, 'damaged undo entry', 'damaged undo entries')} "
                         "set aside in this session (named when it was set aside; kept as .damaged-* folders for "
                         "you to inspect) cannot be undone by LACA.", "laca.warn")
                return
            self.say("Nothing to undo: no command or file write has changed the workspace in this session. "
                     "Changes made outside LACA, or by a command run outside the sandbox, are not recorded.")
            return
        result = facade.undo(int(arg or 1))
        if result.conflicts and not result.reverted and all(_git_cache(c.path) for c in result.conflicts):
            result = facade.undo(int(arg or 1), force=True)  # git refreshed its index cache since: not an edit
        if result.conflicts and not result.reverted:
            for c in result.conflicts[:8]:
                self.say(f"  changed since: {c.path} ({c.reason})", "laca.warn")
            from framework_core.ui.keys import ask_key

            key = ask_key("Undo anyway and overwrite those changes? [y/N] ", "yn", default="n",
                          pt_input=self.repl._pt_io["input"], pt_output=self.repl._pt_io["output"])
            if key != "y":
                self.say("Nothing was undone.", "laca.warn")
                return
            result = facade.undo(int(arg or 1), force=True)
        self.say(result.summary(), "laca.ok" if result.reverted and not result.errors else "laca.warn")
        for err in result.errors[:5]:
            self.say(f"  {err}", "laca.err")
        if result.reverted:
            facade.note_for_model("the user undid " + ", ".join(f"`{e.label}`" for e in result.reverted)
                                      + ": the workspace is as it was before.")

    def changes(self, arg: str) -> None:
        """The changes /undo can revert, newest first."""
        import time

        entries = self.facade.changes()
        if not entries:
            self.say("No changes recorded in this session.")
            return
        for n, e in enumerate(entries, start=1):
            when = time.strftime("%H:%M:%S", time.localtime(e.created_ns / 1e9))
            state = "" if e.state == "committed" else (
                f", INTERRUPTED: {e.landed} of {e.paths} landed" if e.landed is not None else ", interrupted")
            self.say(f"  {n:>2}. #{int(e.id):<3} {when}  {e.label[:90]}  ({plural(e.paths, 'path')}{state})",
                     "laca.warn" if state else "")
        self.say("/undo N reverts the newest N of these; /undo #C reverts back to change #C.", "laca.dim")

    # -- permissions --------------------------------------------------------------------------
    def show_permissions(self, arg: str) -> None:
        self.say(self.facade.permissions_text())

    def revoke(self, arg: str) -> None:
        if not arg.isdigit():
            raise LacaError("usage: /revoke N  (see /show-permissions for the numbers)")
        label = self.facade.revoke(int(arg))
        self.say(f"Revoked: {label}", "laca.ok")

    def allow_dangerous(self, arg: str) -> None:
        facade = self.facade
        wanted = _on_off(arg, facade.allow_dangerous, "allow-dangerous")
        if wanted is None:
            self.say(f"Allow-dangerous is {'ON' if facade.allow_dangerous else 'off'}. /allow-dangerous on|off",
                     "laca.dim")
            return
        facade.set_allow_dangerous(wanted)
        if wanted:
            self.say("ALLOW-DANGEROUS is ON: Dangerous commands are no longer blocked outright; each one still asks "
                     "and defaults to No. /allow-dangerous off turns it off.", "laca.danger")
        else:
            self.say("Allow-dangerous is off: Dangerous commands are blocked again.", "laca.ok")

    def dry_run(self, arg: str) -> None:
        facade = self.facade
        wanted = _on_off(arg, facade.dry_run, "dry-run")
        if wanted is None:
            self.say(f"Dry run is {'ON' if facade.dry_run else 'off'}. /dry-run on|off", "laca.dim")
            return
        facade.set_dry_run(wanted)
        if wanted and facade.can_preview:
            self.say("Dry run is ON: commands run in the sandbox's overlay without the network; you see the changes "
                     "they would make and choose whether to apply them. File writes are shown, not made.", "laca.warn")
        elif wanted:
            self.say("Dry run is ON: nothing runs (this machine cannot overlay the workspace, so commands cannot "
                     "be previewed); you see what would run.", "laca.warn")
        else:
            self.say("Dry run is off.", "laca.ok")


def _git_cache(path: str) -> bool:
    """`.git/index` is rewritten by any `git status` (a git-aware prompt included): restoring it is expected."""
    return path.endswith("/.git/index") or path == ".git/index"


def _on_off(arg: str, current: bool, name: str) -> bool | None:
    """`on`/`off` (or yes/no, true/false, 1/0); no argument shows the state (None)."""
    word = arg.strip().lower()
    if not word:
        return None
    if word in ("on", "yes", "true", "1"):
        return True
    if word in ("off", "no", "false", "0"):
        return False
    raise LacaError(f"usage: /{name} on|off  (it is {'on' if current else 'off'} now)")
