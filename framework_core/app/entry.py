"""Process entry point (`laca`, `python run_framework.py`): one clear message and an exit code, never a traceback.

The common case (start the REPL or run `-p`) is parsed from the option table without importing typer;
everything else (subcommands, --help, completion, usage errors) goes to the typer app in `cli.py`.
Exit codes: 0 ok, 1 runtime error, 2 usage or config error, 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from framework_core.app.cli_options import fast_parse
from framework_core.errors import LacaError


def normalise(argv: list[str]) -> list[str]:
    """`--resume` without an ID means "list sessions": give it an explicit empty value."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--resume" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = "--resume="
    return out


def run_root(values: dict[str, Any]) -> int:
    """Start the REPL or a one-shot turn from parsed root options (typer's or the fast path's)."""
    from framework_core.config.load import Overrides
    from framework_core.app.startup import start
    from framework_core.core.options import StartOptions

    if values.get("version"):
        print(f"laca {version()}")
        return 0
    fmt = str(getattr(values["output_format"], "value", values["output_format"]))
    prompt, message = values["prompt"], values.get("message")
    check_combinations(values, fmt)
    if prompt is None and not message and not sys.stdin.isatty():
        prompt = "-"  # `echo hi | laca`: a one-shot turn, never a full-screen prompt drawn into a pipe
    elif prompt not in (None, "-"):
        prompt = with_piped_input(prompt)  # `git diff | laca -p 'review this'`: the data comes with it
    mode = values.get("permission_mode")
    overrides = Overrides(config_path=values["config"], provider=values["provider"], model=values["model"],
                          persona=values["persona"], sandbox=values.get("sandbox"), trust=bool(values.get("trust")))
    return start(StartOptions(overrides=overrides, prompt=prompt, output_format=fmt,
                              continue_latest=values["continue_"], resume=values["resume"],
                              dry_run=values["dry_run"], no_mcp=values["no_mcp"],
                              fork=bool(values.get("fork_session")), message=message,
                              allow=list(values.get("allow") or []),
                              permission_mode=str(getattr(mode, "value", mode)) if mode else None))


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        return package_version("laca")
    except PackageNotFoundError:
        return "(not installed; run from a source tree)"


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
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:  # click usage errors (typer may vendor click, so match by shape) and bugs
        if type(exc).__name__ == "Abort":
            return 130
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            exc.show()
            return 2
        if type(exc).__name__ == "Exit" and hasattr(exc, "exit_code"):
            return int(exc.exit_code)
        print(f"laca: internal error: {type(exc).__name__}: {exc}. Please report it.", file=sys.stderr)
        return 1
    return rc if isinstance(rc, int) else 0


def main(argv: list[str] | None = None) -> None:
    from framework_core.app.cli_options import FastParseError

    args = normalise(sys.argv[1:] if argv is None else argv)
    try:
        values = fast_parse(args)
    except FastParseError as exc:
        print(f"laca: {exc}. See laca --help.", file=sys.stderr)
        sys.exit(2)
    if values is not None:
        sys.exit(guarded(lambda: run_root(values)))
    from framework_core.app.cli import app

    sys.exit(guarded(lambda: app(args=args, standalone_mode=False, prog_name="laca")))
