"""Command line: `laca` / `python run_framework.py`. Parses flags, loads config, starts the REPL or one turn.

Exit codes: 0 ok, 1 runtime error, 2 usage or config error, 130 interrupted.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from framework_core.errors import ConfigError, LacaError

EPILOG = """Examples:

  laca                                 start the REPL in this directory (the workspace)

  laca --provider anthropic            chat through Anthropic (needs ANTHROPIC_API_KEY)

  laca --provider ollama --model qwen2.5-coder   a local OpenAI-compatible server

  laca -p "summarise README.md"        one turn, answer on stdout

  git diff | laca -p - --output-format json

  laca --continue                      resume the latest session of this workspace

  laca policy check 'rm -rf ~'         explain how a command would be treated

  laca config show                     the effective config, with each value's source
"""

app = typer.Typer(add_completion=True, no_args_is_help=False, epilog=EPILOG, rich_markup_mode=None,
                  help="LACA: a terminal AI agent that asks before it acts.", context_settings={"help_option_names": ["-h", "--help"]})
policy_app = typer.Typer(help="Inspect the permission policy.", no_args_is_help=True)
config_app = typer.Typer(help="Create or inspect the configuration.", no_args_is_help=True)
app.add_typer(policy_app, name="policy")
app.add_typer(config_app, name="config")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    stream_json = "stream-json"


def _overrides(ctx: typer.Context):
    from framework_core.config_load import Overrides

    return ctx.obj if isinstance(ctx.obj, Overrides) else Overrides()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    prompt: Optional[str] = typer.Option(None, "-p", "--print", help="Run one turn with this prompt ('-' reads stdin), print the answer, exit."),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--output-format", help="With -p: text, json or stream-json."),
    config: Optional[str] = typer.Option(None, "--config", help="Extra config file, layered above the workspace one."),
    provider: Optional[str] = typer.Option(None, "--provider", help="Provider key from llm_settings (openai, anthropic, ollama, …)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name for the provider."),
    persona: Optional[str] = typer.Option(None, "--persona", help="Persona id (forge, catalyst, …)."),
    continue_: bool = typer.Option(False, "--continue", "-c", help="Resume the latest session of this workspace."),
    resume: Optional[str] = typer.Option(None, "--resume", help="Resume session ID; without ID, list sessions."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what tools would run, run nothing."),
    no_mcp: bool = typer.Option(False, "--no-mcp", help="Do not start MCP servers."),
) -> None:
    from framework_core.config_load import Overrides

    ctx.obj = Overrides(config_path=config, provider=provider, model=model, persona=persona)
    if ctx.invoked_subcommand:
        return
    from framework_core.startup import StartOptions, start

    opts = StartOptions(overrides=ctx.obj, prompt=prompt, output_format=output_format.value,
                        continue_latest=continue_, resume=resume, dry_run=dry_run, no_mcp=no_mcp)
    raise typer.Exit(start(opts))


@policy_app.command("check")
def policy_check(
    commands: list[str] = typer.Argument(None, help="Commands to classify (quote each one)."),
    jsonl: bool = typer.Option(False, "--jsonl", help='Read lines {"cmd": "…"} on stdin, write one JSON line each.'),
) -> None:
    """Print how each command is classified (safe / needs_confirm / dangerous) and why."""
    from framework_core.policy.check_cli import run_policy_check

    if not commands and not jsonl:
        raise ConfigError("give one or more commands, or --jsonl to read them from stdin")
    raise typer.Exit(run_policy_check(list(commands or []), jsonl, sys.stdin, sys.stdout))


@config_app.command("init")
def config_init(force: bool = typer.Option(False, "--force", help="Overwrite an existing user config.")) -> None:
    """Write a commented user config file (XDG config dir)."""
    from framework_core.config_cmds import init_user_config

    print(init_user_config(force=force))


@config_app.command("show")
def config_show(ctx: typer.Context) -> None:
    """Print the effective config with each value's source (keys masked)."""
    from framework_core.config_cmds import show_config

    print(show_config(_overrides(ctx)))


def _normalise(argv: list[str]) -> list[str]:
    """`--resume` without an ID means "list sessions": give it an explicit empty value."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--resume" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = "--resume="
    return out


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one clear message and an exit code, never a traceback."""
    args = _normalise(sys.argv[1:] if argv is None else argv)
    try:
        rc = app(args=args, standalone_mode=False, prog_name="laca")
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except LacaError as exc:
        print(f"laca: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, EOFError):
        sys.exit(130)
    except Exception as exc:  # click usage errors (typer may vendor click, so match by shape) and bugs
        if type(exc).__name__ == "Abort":
            sys.exit(130)
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            exc.show()
            sys.exit(2)
        print(f"laca: internal error: {type(exc).__name__}: {exc}. Please report it.", file=sys.stderr)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
