"""What each slash command does. Table in slash.py; this module holds the behaviour."""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from framework_core.errors import LacaError

if TYPE_CHECKING:
    from framework_core.ui.repl import Repl


class ExitRepl(Exception):
    """Raised by /exit."""


class Commands:
    def __init__(self, repl: "Repl") -> None:
        self.repl = repl

    @property
    def agent(self):
        return self.repl.agent

    def say(self, text: str, style: str = "") -> None:
        self.repl.console.print(Text(text, style=style))

    # -- session ------------------------------------------------------------------------------
    def help(self, arg: str) -> None:
        from framework_core.ui.slash import COMMANDS, TOPICS

        for topic, title in TOPICS.items():
            table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
            for cmd in [c for c in COMMANDS if c.topic == topic]:
                table.add_row(f"/{cmd.name} {cmd.args}".strip(), cmd.help)
            self.repl.console.print(table)
        self.say("Keys: Enter sends · Alt+Enter or Esc Enter adds a line · Ctrl-R searches history · "
                 "@path attaches a file · Ctrl-C stops a reply · Ctrl-D quits", "laca.dim")

    def exit(self, arg: str) -> None:
        raise ExitRepl()

    def clear(self, arg: str) -> None:
        self.agent.session.clear()
        self.say("Conversation cleared.", "laca.ok")

    def sessions(self, arg: str) -> None:
        from framework_core.startup import format_sessions

        self.say(format_sessions(self.repl.loaded))
        self.say(f"This session: {self.agent.session.session_id}", "laca.dim")

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
            self.say(f"Persona: {self.agent.persona_id}. Available: {', '.join(self.agent.dcm.persona_ids())}")
            return
        self.agent.set_persona(arg)
        self.say(f"Persona is now {arg}.", "laca.ok")

    def provider(self, arg: str) -> None:
        if not arg:
            self.say(f"Provider: {self.agent.provider_name} ({self.agent.provider.type} API, model "
                     f"{self.agent.provider.model}). Available: {', '.join(sorted(self.agent.config.llm_settings))}")
            return
        name, _, model = arg.partition(" ")
        self.agent.set_provider(name, model.strip() or None)
        self.say(f"Provider is now {name} ({self.agent.provider.model}); the conversation is kept.", "laca.ok")

    def model(self, arg: str) -> None:
        if not arg:
            self.say(f"Model: {self.agent.provider.model}. Known: {', '.join(self.agent.provider.models) or '-'}")
            return
        self.agent.set_model(arg)
        self.say(f"Model is now {arg}.", "laca.ok")

    def tokens(self, arg: str) -> None:
        from framework_core.compaction import usage_report

        self.say(usage_report(self.agent))

    def compact(self, arg: str) -> None:
        from framework_core.compaction import compact

        self.say(compact(self.agent, force=True))

    def context(self, arg: str) -> None:
        table = Table("document", "kind", "source", "≈tokens", box=None)
        total = 0
        for doc in self.agent.dcm.documents():
            table.add_row(doc.doc_id, doc.kind, str(doc.source), f"{doc.approx_tokens:,}")
            total += doc.approx_tokens
        self.repl.console.print(table)
        self.say(f"≈{total:,} tokens of context documents; active persona: {self.agent.persona_id}", "laca.dim")

    # -- tools --------------------------------------------------------------------------------
    def tools(self, arg: str) -> None:
        table = Table("tool", "source", "permission", "description", box=None)
        for spec in sorted(self.agent.teps.registry.all(), key=lambda s: (s.source != "builtin", s.name)):
            perm = spec.permission or {"bash": "policy (safe runs, others ask)", "read": "policy (runs, flags outside)",
                                       "write": "asks", "generic": "asks"}[spec.kind]
            table.add_row(spec.name, spec.source, perm, (spec.description.splitlines() or [""])[0][:70])
        self.repl.console.print(table)

    def mcp(self, arg: str) -> None:
        if self.agent.mcp is None:
            self.say("No MCP servers configured (mcp_servers: in framework_config.yaml, or a workspace .mcp.json).")
            return
        table = Table("server", "state", "tools", "note", box=None)
        for st in self.agent.mcp.status():
            table.add_row(st.name, st.state, ", ".join(st.tools) or "-", st.error or str(st.log_path))
        self.repl.console.print(table)

    def undo(self, arg: str) -> None:
        n = int(arg) if arg.isdigit() else 1
        history = self.agent.teps.file_history
        if not len(history):
            self.say("Nothing to undo: the agent has not changed any file in this session.")
            return
        for line in history.undo(n):
            self.say(line, "laca.ok")

    # -- permissions --------------------------------------------------------------------------
    def show_permissions(self, arg: str) -> None:
        from framework_core.ui.permissions_view import describe_state

        self.say(describe_state(self.agent.teps.policy, self.agent.teps.registry))

    def revoke(self, arg: str) -> None:
        if not arg.isdigit():
            raise LacaError("usage: /revoke N  (see /show-permissions for the numbers)")
        grant = self.agent.teps.policy.grants.revoke(int(arg))
        self.say(f"Revoked: {grant.label}", "laca.ok")

    def allow_dangerous(self, arg: str) -> None:
        state = self.agent.teps.policy
        state.allow_dangerous = not state.allow_dangerous
        if state.allow_dangerous:
            self.say("ALLOW-DANGEROUS is ON: Dangerous commands are no longer blocked outright; each one still asks "
                     "and defaults to No. Run /allow-dangerous again to turn it off.", "laca.danger")
        else:
            self.say("Allow-dangerous is off: Dangerous commands are blocked again.", "laca.ok")

    def dry_run(self, arg: str) -> None:
        self.agent.teps.dry_run = not self.agent.teps.dry_run
        self.say(f"Dry run is {'ON: tools are shown, nothing runs' if self.agent.teps.dry_run else 'off'}.",
                 "laca.warn" if self.agent.teps.dry_run else "laca.ok")
