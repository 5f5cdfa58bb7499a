"""The command line, declared once as data: the root options and the subcommands.

`cli.py` builds the argparse parsers from these tables; `--help` lists what they say. The rows are named
tuples rather than dataclasses: they cost less to define, and this module is imported on every start.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Opt(NamedTuple):
    dest: str
    decls: tuple[str, ...]
    help: str
    metavar: str | None = None  # None: a flag, which takes no value
    choices: tuple[str, ...] = ()
    default: Any = None
    multiple: bool = False  # may be given several times; the values are collected in a list
    optional: bool = False  # the value may be left out; then it is "" (`--resume` alone lists sessions)

    @property
    def takes_value(self) -> bool:
        return self.metavar is not None

    def argparse_kwargs(self) -> dict[str, Any]:
        if not self.takes_value:
            return {"dest": self.dest, "action": "store_true", "help": self.help}
        kwargs: dict[str, Any] = {"dest": self.dest, "help": self.help, "default": self.default,
                                  "metavar": self.metavar, "action": "append" if self.multiple else "store"}
        if self.choices:
            kwargs.update(choices=self.choices, metavar=None)  # usage shows {a,b,c}
        if self.optional:
            kwargs.update(nargs="?", const="")
        return kwargs


OPTIONS: tuple[Opt, ...] = (
    Opt("prompt", ("-p", "--print"), "Run one turn with this prompt ('-' reads stdin), print the answer, exit.",
        "PROMPT"),
    Opt("output_format", ("--output-format",), "With -p: text (default), json or stream-json.", "FORMAT",
        choices=("text", "json", "stream-json"), default="text"),
    Opt("config", ("--config",), "Extra config file, layered above the workspace one.", "FILE"),
    Opt("provider", ("--provider",), "Provider key from llm_settings (openai, anthropic, ollama, …).", "NAME"),
    Opt("model", ("--model",), "Model name for the provider.", "MODEL"),
    Opt("persona", ("--persona",), "Persona id (forge, catalyst, …).", "ID"),
    Opt("continue_", ("-c", "--continue"), "Resume the latest session of this workspace."),
    Opt("resume", ("--resume",), "Resume session ID; without ID, list sessions.", "ID", optional=True),
    Opt("dry_run", ("--dry-run",), "Show what tools would run, run nothing."),
    Opt("no_mcp", ("--no-mcp",), "Do not start MCP servers."),
    Opt("fork_session", ("--fork-session",), "With --continue / --resume: start a new session from that one's "
        "history, leaving it alone (for a session open in another LACA)."),
    Opt("sandbox", ("--sandbox",), "Sandbox profile for commands: workspace-write (default), read-only or off.",
        "PROFILE", choices=("workspace-write", "read-only", "off")),
    Opt("trust", ("--trust",), "Trust this workspace's own MCP servers, rules, tools and context files."),
    Opt("allow", ("--allow",), "With -p: also allow what matches PATTERN, as a rule file's allowlist line does (a "
        "command prefix such as 'pytest' or 'npm run test'; tool:NAME for a tool, * in names). Repeatable.",
        "PATTERN", multiple=True),
    Opt("permission_mode", ("--permission-mode",), "Start in this mode: ask (default), accept-edits (file writes "
        "inside the workspace run without asking), plan (nothing that changes anything runs) or auto (also commands "
        "that need no network and are not dangerous run without asking, in a complete sandbox, each undoable).",
        "MODE", choices=("ask", "accept-edits", "plan", "auto", "default", "acceptEdits")),
    Opt("version", ("-v", "--version"), "Print LACA's version and exit."),
)
BY_DECL = {decl: opt for opt in OPTIONS for decl in opt.decls}


class Arg(NamedTuple):
    """One argument of a subcommand, as argparse's add_argument takes it."""

    decls: tuple[str, ...]
    kwargs: dict[str, Any]


class Command(NamedTuple):
    path: tuple[str, ...]  # ("config", "show"): `laca config show`
    summary: str  # one line, in the root --help's list
    usage_hint: str = ""  # what follows the path in that list (`CMD … | --jsonl`, `[--all]`)
    args: tuple[Arg, ...] = ()
    details: str = ""  # added to the summary in the command's own --help


GROUPS = {"policy": "Inspect the permission policy.", "config": "Create or inspect the configuration.",
          "audit": "Check a workspace's audit log of tool calls, or judge its commands again."}
_WORKSPACE = Arg(("--workspace",), {"metavar": "PATH", "help": "The workspace whose log to read (default: here)."})

COMMANDS: tuple[Command, ...] = (
    Command(("policy", "check"), "How each command is classified (safe / needs_confirm / dangerous) and why.",
            "CMD … | --jsonl", (
                Arg(("commands",), {"nargs": "*", "metavar": "CMD", "help": "Commands to classify (quote each one)."}),
                Arg(("--jsonl",), {"action": "store_true",
                                   "help": 'Read lines {"cmd": "…"} on stdin, write one JSON line each.'})),
            details="Also what a session here would do with it under the same rule files (allowlist, "
            "~/.config/laca/rules.yaml, a trusted .laca/rules.yaml)."),
    Command(("config", "init"), "Write a commented user config file (in the XDG config folder).", "[--force]", (
        Arg(("--force",), {"action": "store_true", "help": "Overwrite an existing user config."}),)),
    Command(("config", "show"), "Print the effective config with each value's source (keys masked).", "[--all]", (
        Arg(("--all",), {"action": "store_true", "dest": "all_providers",
                         "help": "List every provider's settings, not only the active one's."}),)),
    Command(("audit", "verify"), "Check that the workspace's audit log is unchanged (exit 1 naming the first "
            "changed line).", "[--workspace PATH]", (_WORKSPACE,),
            details="Every record carries the hash of the one before and of itself."),
    Command(("audit", "replay"), "Judge every recorded command again under today's policy and rule files; list "
            "those decided differently now.", "[--since DATE]", (
                Arg(("--since",), {"metavar": "DATE", "help": "Only calls from DATE on (YYYY-MM-DD or "
                                                              "YYYY-MM-DDTHH:MM, UTC)."}), _WORKSPACE)),
    Command(("doctor",), "What the command sandbox can set up here, and whether the provider works end to end.",
            details="The sandbox's parts and settings; then the provider, key, address, whether the server answers, "
            "lists the model, makes a tool call round trip and (for a local server) serves the context window it "
            "claims. The provider check sends three small requests."),
)
NAMES = {command.path[0] for command in COMMANDS}


def command_start(argv: list[str]) -> int | None:
    """Where a subcommand starts in `argv`: the first word that is neither an option nor an option's value,
    when it names a subcommand (`laca --provider x doctor`). Any other first word begins the REPL's first
    message (`laca fix the failing test`), and so does everything after `--`."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return None
        if arg.startswith("-") and arg != "-":
            opt = BY_DECL.get(arg)  # `--provider=x` and unknown options are one word
            takes_next = opt is not None and opt.takes_value and i + 1 < len(argv) and \
                not (opt.optional and argv[i + 1].startswith("-"))
            i += 2 if takes_next else 1
            continue
        return i if arg in NAMES else None
    return None
