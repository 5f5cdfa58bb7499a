"""Command line: one typer app for every `laca` command line, its help and its shell completion.

`laca [options] [MESSAGE …]` starts the REPL or one turn (`entry.run_root`); `laca [options] COMMAND …` runs a
subcommand, with the options before it applied to the config it reads. Parsing never runs anything: each
command's function returns a `Parsed` (what to run and with what), which `entry.dispatch` runs outside the
parser. A usage error is one line naming the problem and the --help to read (exit code 2).

The root is a group whose first word may be a subcommand or the first word of a message; `RootGroup` reads
which (`cli_options.command_start`) and, for a message, lets the options and the words mix as they may.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import typer
from typer.core import TyperGroup, TyperOption

from framework_core.app import cli_options as o
from framework_core.app import subcommands as run
from framework_core.errors import LacaError

if TYPE_CHECKING:
    from typer import _click

    from framework_core.config.load import Overrides

Handler = Callable[[dict[str, Any], "Overrides"], int]
WORDS = "laca.words"  # the message's words, kept in the root context's meta
HELP_NAMES = ["-h", "--help"]
COMPLETE_VAR = "_LACA_COMPLETE"  # what the completion scripts set when they ask laca for the words


class UsageError(LacaError):
    """A command line the parser cannot read: printed as one line, exit code 2."""

    exit_code = 2


class Parsed(NamedTuple):
    values: dict[str, Any]  # the root options (name → value) and "message"
    command: Handler | None = None  # a subcommand, or None for the REPL / -p
    args: dict[str, Any] = {}  # the subcommand's own arguments (none without one)


class RootGroup(TyperGroup):
    """The root: options, then a subcommand or the words of a first message (options may come between them;
    after `--` everything is a word). A subcommand's app is built when it is named, listed or completed: the
    REPL's start builds only the root's options."""

    def get_command(self, ctx: "_click.Context", cmd_name: str) -> "_click.Command | None":
        if cmd_name not in self.commands and cmd_name in SUBCOMMANDS:
            self.commands[cmd_name] = plain_values(typer.main.get_command(SUBCOMMANDS[cmd_name]))
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: "_click.Context") -> list[str]:
        return list(SUBCOMMANDS)

    def parse_args(self, ctx: "_click.Context", args: list[str]) -> list[str]:
        args = o.with_optional_values(args)
        takes_value = {opt for p in self.params if isinstance(p, TyperOption) and not p.is_flag
                       for opt in p.opts}
        if o.command_start(args, takes_value, set(SUBCOMMANDS)) is not None:
            return super().parse_args(ctx, args)
        ctx.allow_interspersed_args = True
        ctx.meta[WORDS] = super(TyperGroup, self).parse_args(ctx, args)  # a command's parse: no subcommand
        ctx.args = []
        return []

    def collect_usage_pieces(self, ctx: "_click.Context") -> list[str]:
        return [self.options_metavar or "", "[MESSAGE]... | COMMAND [ARGS]..."]

    def shell_complete(self, ctx: "_click.Context", incomplete: str) -> list[Any]:
        if ctx.meta.get(WORDS):  # after a message's first word only options complete
            return super(TyperGroup, self).shell_complete(ctx, incomplete)
        return super().shell_complete(ctx, incomplete)


def _app(**settings: Any) -> typer.Typer:
    """A typer app with LACA's settings: plain help (click's, quick, no markup read in the texts), no completion
    options of its own (the root has them) and the usual tracebacks (entry.py words errors)."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, **settings)


app = _app(cls=RootGroup, name="laca", help=o.HELP, epilog=o.EPILOG, invoke_without_command=True,
           context_settings={"help_option_names": HELP_NAMES, "max_content_width": 120})


@app.callback()
def root(ctx: typer.Context, prompt: o.Prompt = None, output_format: o.OutputFormat = "text",
         config: o.ConfigFile = None, provider: o.Provider = None, model: o.Model = None, persona: o.Persona = None,
         continue_: o.Continue = False, resume: o.Resume = None, dry_run: o.DryRun = False, no_mcp: o.NoMcp = False,
         fork_session: o.ForkSession = False, sandbox: o.Sandbox = None, trust: o.Trust = False,
         allow: o.Allow = None, permission_mode: o.PermissionMode = None, version: o.Version = False,
         install_completion: o.InstallCompletion = None, show_completion: o.ShowCompletion = None) -> Parsed | None:
    values = {name: value for name, value in locals().items() if name not in ("ctx", "version")}
    words = ctx.meta.get(WORDS) or []
    values["message"] = " ".join(words) if words else None
    ctx.obj = values
    return Parsed(values) if ctx.invoked_subcommand is None else None


def _parsed(ctx: typer.Context, handler: Handler, **args: Any) -> Parsed:
    return Parsed(ctx.find_root().obj, handler, args)


def _group(name: str) -> typer.Typer:
    """A group of subcommands; named alone, it lists them (exit code 2)."""
    group = _app(name=name, help=o.GROUPS[name], invoke_without_command=True)

    @group.callback()
    def listing(ctx: typer.Context) -> Parsed | None:
        return None if ctx.invoked_subcommand else _parsed(ctx, run.group_help, help=ctx.get_help())

    return group


policy_app, config_app, audit_app = _group("policy"), _group("config"), _group("audit")
doctor_app = _app(name="doctor")
#: The subcommands, in the order --help lists them.
SUBCOMMANDS = {"policy": policy_app, "config": config_app, "audit": audit_app, "doctor": doctor_app}


@policy_app.command("check", short_help="How each command is classified (safe / needs_confirm / dangerous) and why.")
def policy_check(ctx: typer.Context, commands: o.Commands = None, jsonl: o.Jsonl = False) -> Parsed:
    """How each command is classified (safe / needs_confirm / dangerous) and why. Also what a session here would
    do with it under the same rule files (allowlist, ~/.config/laca/rules.yaml, a trusted .laca/rules.yaml)."""
    return _parsed(ctx, run.policy_check, commands=commands or [], jsonl=jsonl)


@config_app.command("init")
def config_init(ctx: typer.Context, force: o.Force = False) -> Parsed:
    """Write a commented user config file (in the XDG config folder)."""
    return _parsed(ctx, run.config_init, force=force)


@config_app.command("show")
def config_show(ctx: typer.Context, all_providers: o.AllProviders = False) -> Parsed:
    """Print the effective config with each value's source (keys masked)."""
    return _parsed(ctx, run.config_show, all_providers=all_providers)


@audit_app.command("verify", short_help="Check that the workspace's audit log is unchanged.")
def audit_verify(ctx: typer.Context, workspace: o.Workspace = None) -> Parsed:
    """Check that the workspace's audit log is unchanged: every record's HMAC under the key in LACA's data folder,
    its place and its link to the one before, and the heads the session journals recorded (exit 1 naming the first
    changed line, a log cut short or deleted; 2 when LACA cannot vouch for it: records from before the key, or no
    key). Someone with the key, the log and the journals can rewrite all three: that is not caught."""
    return _parsed(ctx, run.audit_verify, workspace=workspace)


@audit_app.command("replay", short_help="Judge every recorded command again under today's policy and rule files.")
def audit_replay(ctx: typer.Context, since: o.Since = None, workspace: o.Workspace = None) -> Parsed:
    """Judge every recorded command again under today's policy and rule files; list those decided differently
    now."""
    return _parsed(ctx, run.audit_replay, since=since, workspace=workspace)


@doctor_app.command("doctor", short_help="What the command sandbox can set up here, and whether the provider works.")
def doctor(ctx: typer.Context) -> Parsed:
    """What the command sandbox can set up here, and whether the provider works end to end: the sandbox's parts
    and settings; then the provider, key, address, whether the server answers, lists the model, makes a tool call
    round trip and (for a local server) serves the context window it claims. The provider check sends three
    small requests."""
    return _parsed(ctx, run.doctor)


class PlainValues:
    """The coercion of a flag, or of a value that is text: a string, one of a `Literal`'s strings, or a list of
    them.

    typer coerces every value through a pydantic TypeAdapter built at the first parse: pydantic's import and the
    adapters cost 60-90 ms, before the REPL's prompt could be drawn. The parser already gives strings, so only a
    choice needs checking, with the message typer gives."""

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None or value == ():
            return None
        if isinstance(value, bool):
            return value
        choices = param.type_descriptor.choices
        for item in value if isinstance(value, tuple) else (value,):
            if choices and item not in choices:
                raise typer.BadParameter(f"{item!r} is not one of {', '.join(map(repr, choices))}", ctx, param)
        return list(value) if isinstance(value, tuple) else value


def is_text(annotation: Any) -> bool:
    from typing import Literal, get_args, get_origin

    origin = get_origin(annotation)
    if origin is Literal:
        return all(isinstance(arg, str) for arg in get_args(annotation))
    return annotation is str or origin is list and all(is_text(arg) for arg in get_args(annotation))


def plain_values(cmd: "_click.Command") -> "_click.Command":
    """Every flag and text parameter of `cmd` and its subcommands (--help included) coerced by `PlainValues`."""
    help_option = cmd.get_help_option(typer.Context(cmd, help_option_names=HELP_NAMES))
    for param in [*cmd.params, *([help_option] if help_option else [])]:
        annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
        if annotation is bool or is_text(annotation):  # typer builds this attribute at the first parse, unless set
            param._runtime_param = PlainValues()  # type: ignore[attr-defined]
    for sub in getattr(cmd, "commands", {}).values():
        plain_values(sub)
    return cmd


def command() -> "_click.Command":
    """The click command typer builds from the app (once per process; the subcommands when first named)."""
    global _command
    if _command is None:
        _command = plain_values(typer.main.get_command(app))
    return _command


_command: "_click.Command | None" = None


def parse(argv: list[str]) -> Parsed | int:
    """What `argv` asks for, or the exit code when parsing already did it (--help, --version, completion).
    Raises UsageError, one line, for what cannot be read."""
    if COMPLETE_VAR in os.environ:  # a shell asks for completions (the script --show-completion prints)
        from typer import completion

        completion.completion_init()
    try:
        result = command().main(args=argv, prog_name="laca", complete_var=COMPLETE_VAR, standalone_mode=False)
    except typer.Abort:
        return 130
    except typer.TyperException as exc:
        raise UsageError(one_line(exc)) from None
    return result if isinstance(result, (Parsed, int)) else 0


def one_line(exc: typer.TyperException) -> str:
    """A usage error as one line: where (the subcommand), what, and the --help to read."""
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "laca"
    where = path.removeprefix("laca").strip()
    what = " ".join(exc.format_message().split()).rstrip(".")
    return f"{where + ': ' if where else ''}{what}. See {path} --help."


def overrides(values: dict[str, Any]) -> "Overrides":
    """The root options that change the config, for the REPL, -p and the subcommands alike."""
    from framework_core.config.load import Overrides

    return Overrides(config_path=values["config"], provider=values["provider"], model=values["model"],
                     persona=values["persona"], sandbox=values["sandbox"], trust=bool(values["trust"]))
