"""Command line: `laca` / `python run_framework.py`. Parses flags, loads config, starts the REPL or one turn.

Exit codes: 0 ok, 1 runtime error, 2 usage or config error, 130 interrupted.
"""

from __future__ import annotations

import inspect
import sys
from enum import Enum
from typing import Any, Optional

import typer

from framework_core.app.cli_options import OPTIONS
from framework_core.errors import ConfigError

EPILOG = """Examples:

  laca                                 start the REPL in this directory (the workspace)

  laca --provider anthropic            chat through Anthropic (needs ANTHROPIC_API_KEY)

  laca --provider ollama --model qwen2.5-coder   a local OpenAI-compatible server

  laca -p "summarise README.md"        one turn, answer on stdout

  git diff | laca -p - --output-format json

  laca --continue                      resume the latest session of this workspace

  laca policy check 'rm -rf ~'         explain how a command would be treated

  laca config show                     the effective config, with each value's source

  laca doctor                          what the command sandbox can set up on this machine
"""

app = typer.Typer(add_completion=True, no_args_is_help=False, epilog=EPILOG, rich_markup_mode=None,
                  help="LACA: a terminal AI agent that asks before it acts.", context_settings={"help_option_names": ["-h", "--help"]})
policy_app = typer.Typer(help="Inspect the permission policy.", no_args_is_help=True)
config_app = typer.Typer(help="Create or inspect the configuration.", no_args_is_help=True)
app.add_typer(policy_app, name="policy")
app.add_typer(config_app, name="config")


def _overrides(ctx: typer.Context):
    from framework_core.config.load import Overrides

    return ctx.obj if isinstance(ctx.obj, Overrides) else Overrides()


def _root(ctx: typer.Context, **values: Any) -> None:
    from framework_core.config.load import Overrides

    sandbox = values.get("sandbox")
    ctx.obj = Overrides(config_path=values["config"], provider=values["provider"], model=values["model"],
                        persona=values["persona"], sandbox=str(sandbox.value if isinstance(sandbox, Enum) else sandbox)
                        if sandbox else None, trust=bool(values.get("trust")))
    if ctx.invoked_subcommand:
        return
    from framework_core.app.entry import run_root

    raise typer.Exit(run_root(values))


def _root_signature() -> inspect.Signature:
    """typer reads the callback's signature: build it from the option table (one source of truth)."""
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    for opt in OPTIONS:
        kind: Any = bool if not opt.takes_value else Optional[list[str]] if opt.multiple else Optional[str]
        default = None if opt.multiple else opt.default
        if opt.choices:
            enum: Any = Enum(opt.dest.title().replace("_", ""), {c: c for c in opt.choices}, type=str)
            kind, default = (enum, enum(opt.default)) if opt.default is not None else (Optional[enum], None)
        params.append(inspect.Parameter(opt.dest, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                                        default=typer.Option(default, *opt.decls, help=opt.help)))
    return inspect.Signature(params)


_root.__signature__ = _root_signature()  # type: ignore[attr-defined]
_root.__annotations__ = {p.name: p.annotation for p in _root.__signature__.parameters.values()}  # type: ignore[attr-defined]
app.callback(invoke_without_command=True)(_root)


@policy_app.command("check")
def policy_check(
    ctx: typer.Context,
    commands: list[str] = typer.Argument(None, help="Commands to classify (quote each one)."),
    jsonl: bool = typer.Option(False, "--jsonl", help='Read lines {"cmd": "…"} on stdin, write one JSON line each.'),
) -> None:
    """Print how each command is classified (safe / needs_confirm / dangerous) and why, and what a session here
    would do with it under the same rule files (allowlist, ~/.config/laca/rules.yaml, a trusted .laca/rules.yaml)."""
    from pathlib import Path

    from framework_core.config.load import load_config
    from framework_core.policy.check_cli import run_policy_check
    from framework_core.app.wiring import build_policy_state

    if not commands and not jsonl:
        raise ConfigError("give one or more commands, or --jsonl to read them from stdin")
    state = build_policy_state(load_config(Path.cwd(), _overrides(ctx)))
    raise typer.Exit(run_policy_check(list(commands or []), jsonl, sys.stdin, sys.stdout, state))


@config_app.command("init")
def config_init(force: bool = typer.Option(False, "--force", help="Overwrite an existing user config.")) -> None:
    """Write a commented user config file (XDG config dir)."""
    from framework_core.app.config_cmds import init_user_config

    print(init_user_config(force=force))


@config_app.command("show")
def config_show(ctx: typer.Context, all_providers: bool = typer.Option(
        False, "--all", help="List every provider's settings, not only the active one's.")) -> None:
    """Print the effective config with each value's source (keys masked)."""
    from framework_core.app.config_cmds import show_config

    print(show_config(_overrides(ctx), all_providers=all_providers))


@app.command("doctor")
def doctor(ctx: typer.Context) -> None:
    """Check what LACA's sandbox can set up on this machine, and the effective sandbox settings."""
    from framework_core.sandbox.doctor import run_doctor

    raise typer.Exit(run_doctor(_overrides(ctx), sys.stdout))


def main(argv: list[str] | None = None) -> None:
    """Kept for `python -m framework_core` and older scripts: the entry point lives in entry.py."""
    from framework_core.app.entry import main as entry_main

    entry_main(argv)


if __name__ == "__main__":  # pragma: no cover
    main()
