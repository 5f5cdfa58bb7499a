"""The command line's words: the root options as typer declares them, the texts of `--help`, and where a
subcommand starts.

`cli.py` builds the typer app from these; `laca --help` lists what they say. Each root option is an
`Annotated` alias, so the root callback's signature reads as the list of options.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Literal, Optional

import typer

EPILOG = """\b
Examples:
  laca                                           start the REPL in this directory (the workspace)
  laca "fix the failing test"                    the REPL, starting with that message
  laca --provider anthropic                      chat through Anthropic (needs ANTHROPIC_API_KEY)
  laca --provider ollama --model qwen2.5-coder   a local OpenAI-compatible server
  laca -p "summarise README.md"                  one turn, answer on stdout
  git diff | laca -p - --output-format json
  laca --continue                                resume the latest session of this workspace
  laca policy check 'rm -rf ~'                   explain how a command would be treated
  laca config show                               the effective config, with each value's source
  laca doctor                                    the sandbox here, and whether the provider works end to end
  laca audit verify                              check this workspace's audit log of tool calls is unchanged
  laca --install-completion bash                 Tab completion for laca in bash (zsh, fish, powershell)

Exit codes: 0 ok, 1 runtime error, 2 usage or config error, 3 (-p) a call needed an approval nobody could
give, 4 (-p) stopped by the tool-round limit, 130 interrupted."""

HELP = "LACA: a terminal AI agent that asks before it acts. With no command it starts the REPL (with MESSAGE as " \
       "its first message), or one turn with -p."
GROUPS = {"policy": "Inspect the permission policy.", "config": "Create or inspect the configuration.",
          "audit": "Check a workspace's audit log of tool calls, or judge its commands again."}

# The root options, in the order --help lists them.
Prompt = Annotated[Optional[str], typer.Option(
    "-p", "--print", metavar="PROMPT", show_default=False,
    help="Run one turn with this prompt ('-' reads stdin), print the answer, exit.")]
OutputFormat = Annotated[Literal["text", "json", "stream-json"], typer.Option(
    "--output-format", metavar="FORMAT", help="With -p: text (default), json or stream-json.")]
ConfigFile = Annotated[Optional[str], typer.Option(
    "--config", metavar="FILE", help="Extra config file, layered above the workspace one.")]
Provider = Annotated[Optional[str], typer.Option(
    "--provider", metavar="NAME", help="Provider key from llm_settings (openai, anthropic, ollama, …).")]
Model = Annotated[Optional[str], typer.Option("--model", metavar="MODEL", help="Model name for the provider.")]
Persona = Annotated[Optional[str], typer.Option("--persona", metavar="ID", help="Persona id (forge, catalyst, …).")]
Continue = Annotated[bool, typer.Option("-c", "--continue", help="Resume the latest session of this workspace.")]
Resume = Annotated[Optional[str], typer.Option(
    "--resume", metavar="[ID]", help="Resume session ID; without ID, list sessions.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show what tools would run, run nothing.")]
NoMcp = Annotated[bool, typer.Option("--no-mcp", help="Do not start MCP servers.")]
ForkSession = Annotated[bool, typer.Option(
    "--fork-session", help="With --continue / --resume: start a new session from that one's history, leaving it "
    "alone (for a session open in another LACA).")]
Sandbox = Annotated[Optional[Literal["workspace-write", "read-only", "off"]], typer.Option(
    "--sandbox", metavar="PROFILE", help="Sandbox profile for commands: workspace-write (default), read-only or off.")]
Trust = Annotated[bool, typer.Option(
    "--trust", help="Trust this workspace's own MCP servers, rules, tools and context files.")]
Allow = Annotated[Optional[list[str]], typer.Option(
    "--allow", metavar="PATTERN", help="With -p: also allow what matches PATTERN, as a rule file's allowlist line "
    "does (a command prefix such as 'pytest' or 'npm run test'; tool:NAME for a tool, * in names). Repeatable.")]
PermissionMode = Annotated[Optional[Literal["ask", "accept-edits", "plan", "auto", "default", "acceptEdits"]],
                           typer.Option(
    "--permission-mode", metavar="MODE", help="Start in this mode: ask (default), accept-edits (file writes inside "
    "the workspace run without asking), plan (nothing that changes anything runs) or auto (also commands that need "
    "no network and are not dangerous run without asking, in a complete sandbox, each undoable).")]
def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        return package_version("laca")
    except PackageNotFoundError:
        return "(not installed; run from a source tree)"


def _version(value: bool) -> None:
    if value:
        print(f"laca {version()}")
        raise typer.Exit(0)


def _completion(show: bool) -> Callable[[typer.Context, Any, Optional[str]], None]:
    """typer's own --show-completion / --install-completion, with an optional SHELL (detected without one)."""
    def callback(ctx: typer.Context, param: Any, value: Optional[str]) -> None:
        if value is None or ctx.resilient_parsing:
            return
        if value and value not in SHELLS:
            raise typer.BadParameter(f"{value!r} is not a shell LACA completes in: name one of {', '.join(SHELLS)}, "
                                     "or none for the shell this runs in", ctx, param)
        from typer import completion

        completion.completion_init()
        (completion.show_callback if show else completion.install_callback)(ctx, param, value or True)
    return callback


Version = Annotated[bool, typer.Option("-v", "--version", is_eager=True, callback=_version,
                                       help="Print LACA's version and exit.")]
InstallCompletion = Annotated[Optional[str], typer.Option(
    "--install-completion", metavar="[SHELL]", is_eager=True, expose_value=False, callback=_completion(False),
    help="Install Tab completion for SHELL (bash, zsh, fish, powershell; without SHELL, the shell this runs in), "
         "then exit.")]
ShowCompletion = Annotated[Optional[str], typer.Option(
    "--show-completion", metavar="[SHELL]", is_eager=True, expose_value=False, callback=_completion(True),
    help="Print the completion script for SHELL (without SHELL, the shell this runs in), to copy it or customise "
         "the installation.")]

SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
#: Options whose value may be left out (`--resume` alone lists sessions): without a value they read as "".
OPTIONAL_VALUE = frozenset({"--resume", "--install-completion", "--show-completion"})

# The subcommands' arguments.
Commands = Annotated[Optional[list[str]], typer.Argument(
    metavar="CMD", show_default=False, help="Commands to classify (quote each one).")]
Jsonl = Annotated[bool, typer.Option("--jsonl", help='Read lines {"cmd": "…"} on stdin, write one JSON line each.')]
Force = Annotated[bool, typer.Option("--force", help="Overwrite an existing user config.")]
AllProviders = Annotated[bool, typer.Option(
    "--all", help="List every provider's settings, not only the active one's.")]
Workspace = Annotated[Optional[str], typer.Option(
    "--workspace", metavar="PATH", help="The workspace whose log to read (default: here).")]
Since = Annotated[Optional[str], typer.Option(
    "--since", metavar="DATE", help="Only calls from DATE on (YYYY-MM-DD or YYYY-MM-DDTHH:MM, UTC).")]


def with_optional_values(argv: list[str]) -> list[str]:
    """`--resume` followed by nothing or by another option is `--resume=` (the parser needs every value given)."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + argv[i:]
        bare = arg in OPTIONAL_VALUE and (i + 1 == len(argv) or argv[i + 1].startswith("-") and argv[i + 1] != "-")
        out.append(f"{arg}=" if bare else arg)
    return out


def command_start(argv: list[str], takes_value: set[str], names: set[str]) -> int | None:
    """Where a subcommand starts in `argv`: the first word that is neither an option nor an option's value,
    when it names a subcommand (`laca --provider x doctor`). Any other first word begins the REPL's first
    message (`laca fix the failing test`), and so does everything after `--`. `takes_value`: the options that
    take a value (`--provider=x` is one word); `names`: the subcommands."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return None
        if arg.startswith("-") and arg != "-":
            i += 2 if arg in takes_value else 1
            continue
        return i if arg in names else None
    return None
