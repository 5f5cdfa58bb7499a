"""Slash commands as data: name, arguments, help, topic, handler, argument completions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from framework_core.core.facade import Facade
    from framework_core.ui.custom_commands import CustomCommand
    from framework_core.ui.repl import Repl

Handler = Callable[["Repl", str], None]
ArgSource = Callable[["Repl"], list[str]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    help: str
    topic: str
    handler: Handler
    args: str = ""
    complete: ArgSource | None = None
    aliases: tuple[str, ...] = ()


def _h(method: str) -> Handler:
    return lambda repl, arg: getattr(repl.commands, method)(arg)


def _more(name: str) -> Handler:
    from framework_core.ui import more_commands

    return getattr(more_commands, name)


def _personas(repl: "Repl") -> list[str]:
    return repl.facade.personas()


def _providers(repl: "Repl") -> list[str]:
    return repl.facade.providers()


def _models(repl: "Repl") -> list[str]:
    """The configured models, then those the server offers (fetched in the background, once)."""
    facade = repl.facade
    offered = facade.server_models()
    return list(dict.fromkeys([facade.model, *facade.configured_models(),
                               *(offered if isinstance(offered, list) else [])]))


def _session_ids(repl: "Repl") -> list[str]:
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import list_sessions

    return [s.session_id for s in list_sessions(user_data_dir(), repl.facade.workspace)[:30]]


#: Peers' command names that LACA does under another name or outside the REPL: said, not guessed at.
POINTERS = {
    "config": "LACA's settings are files: `laca config show` prints them with where each value comes from; "
              "/model, /provider, /persona and Shift-Tab (modes) change this session's.",
    "memory": "LACA reads AGENTS.md (and CLAUDE.md) from the workspace as the project's memory: edit it, or write "
              "one with /init.",
    "add-dir": "A session has one workspace: start LACA in the folder that holds both, or attach a file with @path.",
}


def _grant_ids(repl: "Repl") -> list[str]:
    return [str(n) for n, _ in repl.facade.grants()]


COMMANDS: list[SlashCommand] = [
    SlashCommand("help", "Show commands by topic", "session", _h("help")),
    SlashCommand("exit", "Quit (Ctrl-D works too)", "session", _h("exit"), aliases=("quit",)),
    SlashCommand("clear", "Start over in a new session (the old one stays saved: /resume ID)", "session",
                 _h("clear"), aliases=("new",)),
    SlashCommand("sessions", "List this workspace's sessions (resume with /resume ID)", "session",
                 _h("sessions")),
    SlashCommand("resume", "Go on in an earlier session of this workspace (a list to pick from without an id)",
                 "session", lambda repl, arg: _more("resume_command")(repl, arg), "[id]", _session_ids),
    SlashCommand("status", "Provider, model, mode, sandbox, session and tokens", "session",
                 lambda repl, arg: _more("status_command")(repl, arg)),
    SlashCommand("init", "Write AGENTS.md for this workspace from what it finds (--force replaces one)", "session",
                 lambda repl, arg: _more("init_command")(repl, arg), "[--force]"),
    SlashCommand("notify", "Bell or desktop notification when a long reply ends: bell|desktop|off [SECONDS]",
                 "session", lambda repl, arg: _more("notify_command")(repl, arg), "[bell|desktop|off] [s]",
                 lambda repl: ["bell", "desktop", "off"]),
    SlashCommand("edit", "Compose the next message in $EDITOR", "session", _h("edit")),
    SlashCommand("persona", "Show or switch the persona", "model", _h("persona"), "[id]", _personas),
    SlashCommand("provider", "Show or switch the provider (history is kept)", "model", _h("provider"), "[name]",
                 _providers),
    SlashCommand("model", "Show or switch the model", "model", _h("model"), "[name]", _models),
    SlashCommand("tokens", "Token usage and cost estimate", "model", _h("tokens"), aliases=("cost",)),
    SlashCommand("compact", "Summarise older turns to free context", "model", _h("compact")),
    SlashCommand("context", "List loaded context documents with token estimates", "model", _h("context")),
    SlashCommand("tools", "List every tool with its source and permission; with a name, its parameters", "tools",
                 _h("tools"), "[name]", lambda repl: sorted(t.name for t in repl.facade.tools())),
    SlashCommand("mcp", "MCP servers, their state and tools; login|logout NAME: sign in again, forget the tokens",
                 "tools", _h("mcp"), "[login|logout NAME]", lambda repl: ["login", "logout"]),
    SlashCommand("last", "The last tool call's whole output, in the pager (with its colours)", "tools",
                 lambda repl, arg: _more("last_output")(repl, arg)),
    SlashCommand("undo", "Revert the last change(s): a command's or a file write's (/changes lists them)", "tools",
                 _h("undo"), "[n]", aliases=("rewind",)),
    SlashCommand("changes", "The changes /undo can revert, newest first", "tools", _h("changes"), aliases=("diff",)),
    SlashCommand("show-permissions", "Rules and session grants, with source and scope", "permissions",
                 _h("show_permissions"), aliases=("approvals", "permissions")),
    SlashCommand("revoke", "Remove session grant N", "permissions", _h("revoke"), "N", _grant_ids),
    SlashCommand("allow-dangerous", "on|off: Dangerous commands may be asked for (each still asks, default No)",
                 "permissions", _h("allow_dangerous")),
    SlashCommand("dry-run", "on|off: preview commands in the overlay, apply only what you accept", "permissions",
                 _h("dry_run")),
]

TOPICS = {"session": "Session", "model": "Model and context", "tools": "Tools", "permissions": "Permissions",
          "custom": "Your commands (.laca/commands, .claude/commands, ~/.config/laca/commands, ~/.claude/commands)",
          "mcp": "Prompts of MCP servers (/mcp__server__prompt [arguments], or name=value)"}


def custom_slash() -> list[SlashCommand]:
    """Commands written as Markdown files (see custom_commands.py); built-in names are never shadowed."""
    from pathlib import Path

    from framework_core.ui.custom_commands import load_commands

    builtin = {n for c in COMMANDS for n in (c.name, *c.aliases)}
    out = []
    for name, custom in load_commands(Path.cwd()).items():
        if name in builtin:
            continue
        out.append(SlashCommand(name, f"{custom.description} ({custom.source})", "custom",
                                _send_custom(custom), custom.argument_hint))
    return out


def _send_custom(custom: "CustomCommand") -> Handler:
    def handler(repl: "Repl", arg: str) -> None:
        from rich.text import Text

        repl.console.print(Text(f"/{custom.name}: sending the text of {custom.path}", style="laca.dim"))
        repl.send(custom.expand(arg))
    return handler


def prompt_commands(facade: "Facade | None") -> list[SlashCommand]:
    """One command per prompt of every ready MCP server (see mcp_commands.py)."""
    from framework_core.ui.mcp_commands import runner, usage

    if facade is None:
        return []
    try:
        prompts = facade.mcp_prompts()
    except Exception:  # noqa: BLE001 - a listing problem must not break the command table
        return []
    return [SlashCommand(p.command, f"{p.description or p.name} (prompt of MCP server {p.server})", "mcp",
                         runner(p), usage(p)) for p in prompts]


def all_commands(facade: "Facade | None" = None) -> list[SlashCommand]:
    """Built-in commands, Markdown ones, and with a façade the prompts of ready MCP servers."""
    return COMMANDS + custom_slash() + prompt_commands(facade)


def lookup(name: str, facade: "Facade | None" = None) -> SlashCommand | None:
    for cmd in COMMANDS:
        if name == cmd.name or name in cmd.aliases:
            return cmd
    found = next((c for c in custom_slash() if c.name == name), None)
    if found is None and name.startswith("mcp__"):
        found = next((c for c in prompt_commands(facade) if c.name == name), None)
    return found


def split(text: str) -> tuple[str, str]:
    body = text.strip()[1:]
    name, _, arg = body.partition(" ")
    return name.strip(), arg.strip()


def is_command(text: str) -> bool:
    """Whether typed text is a slash command rather than a message: one line, starting with `/name` where the
    name is a word, not a path (`/tmp/x/main.py has a bug` is a message; so is a pasted block)."""
    body = text.strip()
    if not body.startswith("/") or body.startswith("//") or "\n" in body:
        return False
    name = body[1:].split(" ", 1)[0]
    if not name or "/" in name or "." in name or name.startswith("~"):
        return False
    from pathlib import Path

    return lookup(name) is not None or not Path("/" + name).exists()  # `/etc is read-only?` is a message


def near_misses(name: str, names: list[str] | None = None, facade: "Facade | None" = None) -> list[str]:
    """Commands spelt like `name` (a typo, a prefix)."""
    import difflib

    known = names if names is not None else [n for c in all_commands(facade) for n in (c.name, *c.aliases)]
    starts = [n for n in known if n.startswith(name) and name]
    return starts[:3] or difflib.get_close_matches(name, known, n=3, cutoff=0.6)
