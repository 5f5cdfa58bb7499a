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
)
BY_DECL = {decl: opt for opt in OPTIONS for decl in opt.decls}


class FastParseError(Exception):
    """The fast path cannot handle this command line; typer will (and report errors properly)."""


def fast_parse(argv: list[str]) -> dict[str, Any] | None:
    """Parse the root options, or return None when typer should handle argv (subcommands, help, errors)."""
    values: dict[str, Any] = {o.dest: o.default for o in OPTIONS}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in SUBCOMMANDS or arg in SLOW_FLAGS or not arg.startswith("-") or arg == "-":
            return None
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
                return None
            if opt.choices and value not in opt.choices:
                return None
            values[opt.dest] = value
        i += 1
    return values
