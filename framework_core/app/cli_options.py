"""The root command's options, declared once as data.

`cli.py` builds the typer callback from this table (for --help, completion and subcommands); `fast_parse`
reads the same table to start the REPL or a one-shot turn without importing typer, which pulls in pydantic
and would delay the prompt by about 0.15 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUBCOMMANDS = {"policy", "config", "doctor"}
SLOW_FLAGS = {"-h", "--help", "--install-completion", "--show-completion"}


@dataclass(frozen=True)
class Opt:
    dest: str
    decls: tuple[str, ...]
    help: str
    takes_value: bool = True
    choices: tuple[str, ...] = ()
    default: Any = None
    multiple: bool = False  # may be given several times; the values are collected in a list


OPTIONS: tuple[Opt, ...] = (
    Opt("prompt", ("-p", "--print"), "Run one turn with this prompt ('-' reads stdin), print the answer, exit."),
    Opt("output_format", ("--output-format",), "With -p: text, json or stream-json.",
        choices=("text", "json", "stream-json"), default="text"),
    Opt("config", ("--config",), "Extra config file, layered above the workspace one."),
    Opt("provider", ("--provider",), "Provider key from llm_settings (openai, anthropic, ollama, …)."),
    Opt("model", ("--model",), "Model name for the provider."),
    Opt("persona", ("--persona",), "Persona id (forge, catalyst, …)."),
    Opt("continue_", ("--continue", "-c"), "Resume the latest session of this workspace.", takes_value=False,
        default=False),
    Opt("resume", ("--resume",), "Resume session ID; without ID, list sessions."),
    Opt("dry_run", ("--dry-run",), "Show what tools would run, run nothing.", takes_value=False, default=False),
    Opt("no_mcp", ("--no-mcp",), "Do not start MCP servers.", takes_value=False, default=False),
    Opt("fork_session", ("--fork-session",), "With --continue / --resume: start a new session from that one's "
        "history, leaving it alone (for a session open in another LACA).", takes_value=False, default=False),
    Opt("sandbox", ("--sandbox",), "Sandbox profile for commands: workspace-write (default), read-only or off.",
        choices=("workspace-write", "read-only", "off")),
    Opt("trust", ("--trust",), "Trust this workspace's own MCP servers, rules, tools and context files.",
        takes_value=False, default=False),
    Opt("allow", ("--allow",), "With -p: also allow what matches PATTERN, as a rule file's allowlist line does (a "
        "command prefix such as 'pytest' or 'npm run test'; tool:NAME for a tool, * in names). Repeatable.",
        multiple=True, default=()),
    Opt("permission_mode", ("--permission-mode",), "Start in this mode: ask (default), accept-edits (file writes "
        "inside the workspace run without asking) or plan (nothing that changes anything runs).",
        choices=("ask", "accept-edits", "plan", "default", "acceptEdits")),
    Opt("version", ("--version", "-v"), "Print LACA's version and exit.", takes_value=False, default=False),
)
BY_DECL = {decl: opt for opt in OPTIONS for decl in opt.decls}


class FastParseError(Exception):
    """The fast path cannot handle this command line; typer will (and report errors properly)."""


def fast_parse(argv: list[str]) -> dict[str, Any] | None:
    """Parse the root options and the words of a first message (`laca "fix the failing test"`), or return None
    when typer should handle argv (subcommands, help, unknown options). A bad choice raises FastParseError."""
    values: dict[str, Any] = {o.dest: (list(o.default) if o.multiple else o.default) for o in OPTIONS}
    words: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            words += argv[i + 1:]
            break
        if (arg in SUBCOMMANDS and not words) or arg in SLOW_FLAGS or arg == "-":
            return None
        if not arg.startswith("-"):
            words.append(arg)
            i += 1
            continue
        name, eq, inline = arg.partition("=")
        opt = BY_DECL.get(name)
        if opt is None:
            return None
        if not opt.takes_value:
            if eq:
                return None
            values[opt.dest] = True
        else:
            if eq:
                value = inline
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                raise FastParseError(f"{name} needs a value")
            if opt.choices and value not in opt.choices:
                raise FastParseError(f"{name} must be one of {', '.join(opt.choices)} (not '{value}')")
            if opt.multiple:
                values[opt.dest].append(value)
            else:
                values[opt.dest] = value
        i += 1
    values["message"] = " ".join(words) if words else None
    return values
