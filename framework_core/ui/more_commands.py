"""Slash commands a daily user of the peers reaches for: /init, /last, /notify, /status, /resume, and /clear's new
session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from framework_core.errors import LacaError

if TYPE_CHECKING:
    from framework_core.ui.repl import Repl

NOTIFY_MODES = ("bell", "desktop", "off")


def new_session(repl: "Repl", arg: str) -> None:
    """/clear: the conversation starts over in a new session; the old one stays saved and resumable."""
    from framework_core.wording import invocation

    old_id, problem = repl.facade.new_session()
    repl.console.print(Text(f"New session {repl.facade.session_id}: the conversation starts over.", style="laca.ok"))
    if problem is None:
        repl.console.print(Text(f"The previous one is saved: {invocation('--resume ' + old_id)}",
                                style="laca.dim"))
    else:
        repl.console.print(Text(f"The previous session was NOT saved: {problem}", style="laca.err"))


def resume_command(repl: "Repl", arg: str) -> None:
    """/resume [ID]: go on in an earlier session of this workspace, switching in place; without an id, the same
    list as `laca --resume` (each session's first and last message) and a question."""
    from framework_core.ui.sessions_view import format_sessions

    ref = arg.strip()
    if not ref:
        from framework_core.ui.keys import ask_line

        repl.console.print(Text(format_sessions(repl.facade.workspace, numbered=True)))
        ref = ask_line("Resume which? (number or id; Enter cancels) ", pt_input=repl._pt_io["input"],
                       pt_output=repl._pt_io["output"]).strip()
        if not ref:
            return
        ids = _numbered_sessions(repl)
        if ref.isdigit() and 1 <= int(ref) <= len(ids):
            ref = ids[int(ref) - 1]
    closed, notes = repl.facade.resume_session(ref)  # an unknown id is a LacaError, said by the REPL
    for note in notes:
        repl.console.print(Text(note, style="laca.warn"))
    repl.console.print(Text(f"Resumed session {repl.facade.session_id}.", style="laca.ok"))
    if closed.problem is not None:
        repl.console.print(Text(f"The previous session was NOT saved: {closed.problem}", style="laca.err"))
    else:
        repl.console.print(Text(f"The previous one is saved: /resume {closed.session_id}", style="laca.dim"))
    for line in repl.facade.recap():
        repl.console.print(Text(line, style="laca.dim"))


def _numbered_sessions(repl: "Repl") -> list[str]:
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import list_sessions

    return [s.session_id for s in list_sessions(user_data_dir(), repl.facade.workspace)[:30]]


def status_command(repl: "Repl", arg: str) -> None:
    """/status: what the status line shows, spelt out."""
    s = repl.facade.status()
    rows = [("provider", s.provider), ("model", s.model), ("persona", s.persona), ("mode", s.mode),
            ("dry run", "on" if s.dry_run else "off"), ("dangerous commands", "may ask" if s.allow_dangerous
                                                          else "blocked"),
            ("sandbox", s.sandbox), ("context", f"{s.context_percent:.0f}% of the window"), ("tokens", s.totals),
            ("session", s.session_id + (" (NOT saved)" if s.not_saved else ""))]
    for name, value in rows:
        repl.console.print(Text.assemble((f"{name:<20}", "laca.dim"), value))


# -- /last ---------------------------------------------------------------------------------------------------

def last_output(repl: "Repl", arg: str) -> None:
    """/last: the last tool call's whole output (beyond the head and tail shown), in the pager, in colour."""
    from framework_core.ui.approver import page
    from framework_core.ui.render import output_text

    ev = repl.renderer.last_call
    if ev is None:
        repl.console.print(Text("No tool call yet in this session.", style="laca.dim"))
        return
    data = ev.result.data
    text = _full_output(data)
    head = Text(f"{ev.request.tool_name}: {json.dumps(ev.request.parameters, ensure_ascii=False)[:200]}", style="bold")
    lines = [head, Text(f"status {ev.result.status}" + (f", exit {data['exit_code']}" if "exit_code" in data else ""),
                        style="laca.dim")]
    lines += [output_text(line) for line in text.splitlines()] or [Text("(no output)", style="laca.dim")]
    from rich.console import Group

    page(repl.console, Group(*lines))


def _full_output(data: dict) -> str:
    path = data.get("full_output_path")
    if path and Path(path).is_file():
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
    out = [str(data.get(k)) for k in ("stdout", "stderr", "content", "error_message", "details", "message")
           if data.get(k)]
    out += [f"image {n}: {i['mime_type']}, saved as {i['path']}" for n, i in enumerate(data.get("images") or [], 1)
            if isinstance(i, dict) and i.get("path")]
    return "\n".join(out)


# -- /notify -------------------------------------------------------------------------------------------------

def notify_setting() -> tuple[str, float]:
    """(how, after how many seconds): LACA_NOTIFY=bell|desktop|off, LACA_NOTIFY_AFTER_S (default 15)."""
    how = os.environ.get("LACA_NOTIFY", "bell").strip().lower()
    try:
        after = float(os.environ.get("LACA_NOTIFY_AFTER_S", "15"))
    except ValueError:
        after = 15.0
    return (how if how in NOTIFY_MODES else "bell"), after


def notify_command(repl: "Repl", arg: str) -> None:
    words = arg.split()
    if not words:
        how, after = notify_setting()
        repl.console.print(Text(f"When a reply takes over {after:g} s: {how}. /notify bell|desktop|off [SECONDS] "
                                "(or LACA_NOTIFY and LACA_NOTIFY_AFTER_S in the environment)", style="laca.dim"))
        return
    if words[0] not in NOTIFY_MODES or (len(words) > 1 and not words[1].replace(".", "", 1).isdigit()):
        raise LacaError("usage: /notify bell|desktop|off [SECONDS]")
    os.environ["LACA_NOTIFY"] = words[0]
    if len(words) > 1:
        os.environ["LACA_NOTIFY_AFTER_S"] = words[1]
    how, after = notify_setting()
    repl.console.print(Text(f"Notify: {how} when a reply takes over {after:g} s (this session).", style="laca.ok"))


def notify_done(console, started: float, what: str = "LACA: the reply is done") -> None:
    """After a long turn: a terminal bell, or a desktop notification (OSC 777 / OSC 9, which terminals show)."""
    how, after = notify_setting()
    if how == "off" or time.monotonic() - started < after or not console.is_terminal:
        return
    if how == "desktop":
        console.file.write(f"\x1b]777;notify;LACA;{what}\x07\x1b]9;{what}\x07")
    console.file.write("\a")
    console.file.flush()


# -- /init ---------------------------------------------------------------------------------------------------

def init_command(repl: "Repl", arg: str) -> None:
    """/init: write AGENTS.md for this workspace from what it finds (asks before replacing one)."""
    from framework_core.ui.agents_md import draft_agents_md

    workspace = repl.facade.workspace
    target = workspace / "AGENTS.md"
    if target.exists() and arg.strip() != "--force":
        repl.console.print(Text(f"{target} exists; /init --force replaces it (its text is shown by /context).",
                                style="laca.warn"))
        return
    text = draft_agents_md(workspace)
    target.write_text(text, encoding="utf-8")
    repl.facade.reload_workspace_instructions()
    repl.console.print(Text(f"Wrote {target} ({len(text.splitlines())} lines); it is part of the instructions "
                            "from the next message on. Edit it freely; ask the model to improve it.", style="laca.ok"))


def mcp_sign_in(repl: "Repl", words: list[str]) -> None:
    """`/mcp login NAME` starts the server again (a browser sign-in when it has no valid tokens);
    `/mcp logout NAME` deletes its stored tokens and stops it."""
    facade = repl.facade
    names = [s.name for s in facade.mcp_status() or []]
    if len(words) != 2 or words[0] not in ("login", "logout"):
        raise LacaError("usage: /mcp [login|logout NAME]  (/mcp lists the servers)")
    action, name = words
    if name not in names:
        raise LacaError(f"no MCP server named '{name}'; the servers are: {', '.join(names) or 'none'}")
    if action == "logout":
        gone, folder = facade.mcp_logout(name)
        said = (f"Forgot the sign-in of '{name}' ({len(gone)} file{'s' if len(gone) != 1 else ''} deleted from "
                f"{folder}); the server is stopped.") if gone else \
            f"'{name}' had no stored sign-in (kept in {folder}); the server is stopped."
        repl.console.print(Text(said))
        return
    facade.mcp_restart(name)
    repl.console.print(Text(f"Starting '{name}' again; if it asks for a sign-in, its address is shown here and "
                            "opened in your browser. /mcp shows its state.", style="laca.dim"))
