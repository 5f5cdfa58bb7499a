"""Process entry point (`laca`, `python run_framework.py`): one clear message and an exit code, never a traceback.

The common case (start the REPL or run `-p`) is parsed from the option table without importing typer;
everything else (subcommands, --help, completion, usage errors) goes to the typer app in `cli.py`.
Exit codes: 0 ok, 1 runtime error, 2 usage or config error, 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from framework_core.cli_options import fast_parse
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
    from framework_core.config_load import Overrides
    from framework_core.startup import StartOptions, start

    overrides = Overrides(config_path=values["config"], provider=values["provider"], model=values["model"],
                          persona=values["persona"], sandbox=values.get("sandbox"), trust=bool(values.get("trust")))
    return start(StartOptions(overrides=overrides, prompt=values["prompt"], output_format=str(values["output_format"]),
                              continue_latest=values["continue_"], resume=values["resume"],
                              dry_run=values["dry_run"], no_mcp=values["no_mcp"],
                              fork=bool(values.get("fork_session"))))


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
    args = normalise(sys.argv[1:] if argv is None else argv)
    values = fast_parse(args)
    if values is not None:
        sys.exit(guarded(lambda: run_root(values)))
    from framework_core.cli import app

    sys.exit(guarded(lambda: app(args=args, standalone_mode=False, prog_name="laca")))
