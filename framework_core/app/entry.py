"""Process entry point (`laca`, `python run_framework.py`): one clear message and an exit code, never a traceback.

`cli.parse` reads the command line (the typer app in `cli.py`); then either a subcommand runs or `run_root`
starts the REPL or a one-shot turn.
Exit codes: 0 ok, 1 runtime error, 2 usage or config error, 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from framework_core.errors import LacaError


def run_root(values: dict[str, Any]) -> int:
    """Start the REPL or a one-shot turn from the parsed root options (`cli.parse`)."""
    from framework_core.app.cli import overrides
    from framework_core.app.startup import start
    from framework_core.core.options import StartOptions

    fmt = values["output_format"]
    prompt, message = values["prompt"], values.get("message")
    check_combinations(values, fmt)
    if prompt is None and not message and not sys.stdin.isatty():
        prompt = "-"  # `echo hi | laca`: a one-shot turn, never a full-screen prompt drawn into a pipe
    elif prompt not in (None, "-"):
        prompt = with_piped_input(prompt)  # `git diff | laca -p 'review this'`: the data comes with it
    return start(StartOptions(overrides=overrides(values), prompt=prompt, output_format=fmt,
                              continue_latest=values["continue_"], resume=values["resume"],
                              dry_run=values["dry_run"], no_mcp=values["no_mcp"],
                              fork=bool(values.get("fork_session")), message=message,
                              allow=list(values.get("allow") or []),
                              permission_mode=values.get("permission_mode")))


def check_combinations(values: dict[str, Any], fmt: str) -> None:
    """Options that mean nothing together are refused, never silently ignored."""
    from framework_core.errors import ConfigError

    prompt = values["prompt"]
    if prompt is not None and not prompt.strip():
        raise ConfigError("-p got an empty prompt. Give the text (-p 'fix the test'), or -p - to read it from stdin")
    if prompt is not None and values.get("message"):
        raise ConfigError(f"give the prompt once: -p '…' or a message ('{values['message']}'), not both")
    if fmt != "text" and prompt is None and sys.stdin.isatty():
        raise ConfigError("--output-format applies to one-shot runs: add -p 'PROMPT' (or pipe the prompt in)")
    if values["continue_"] and values["resume"] is not None:
        raise ConfigError("--continue and --resume both pick a session: use one (--resume ID for a given one)")


def with_piped_input(prompt: str) -> str:
    """The prompt, followed by whatever was piped into stdin (nothing when stdin is a terminal or stays
    empty: a pipe that no one writes to must not hang a run)."""
    import os
    import select
    import stat

    try:
        if sys.stdin.isatty() or not stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode) and \
                not stat.S_ISREG(os.fstat(sys.stdin.fileno()).st_mode):
            return prompt
        if not select.select([sys.stdin], [], [], 0.3)[0]:
            return prompt
        data = sys.stdin.read()
    except (OSError, ValueError):
        return prompt
    return f"{prompt}\n\n{data}" if data.strip() else prompt


def guarded(fn: Callable[[], Any]) -> int:
    try:
        rc = fn()
    except LacaError as exc:
        print(f"laca: {exc}", file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, EOFError):
        return 130
    except SystemExit as exc:  # shell completion answered
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:  # a bug
        print(f"laca: internal error: {type(exc).__name__}: {exc}. Please report it.", file=sys.stderr)
        return 1
    return rc if isinstance(rc, int) else 0


def dispatch(argv: list[str]) -> int:
    from framework_core.app.cli import overrides, parse

    parsed = parse(argv)
    if isinstance(parsed, int):  # --help, --version, shell completion: done while parsing
        return parsed
    try:
        if parsed.command is not None:
            return parsed.command(parsed.args, overrides(parsed.values))
        return run_root(parsed.values)
    finally:
        say_store_reports()


def say_store_reports() -> None:
    """A damaged store moved aside where no start-up note said it (a subcommand, a start that failed): on stderr,
    so it is said once wherever it happened."""
    from framework_core.config.json_store import take_reports

    for report in take_reports():
        print(f"laca: {report}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    sys.exit(guarded(lambda: dispatch(sys.argv[1:] if argv is None else argv)))
