"""What each subcommand does: its arguments (as the command line read them) and the config overrides the root
options give, in; an exit code out. `cli.py` declares the commands and their arguments."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.config.load import Overrides


def group_help(args: dict[str, Any], _overrides: Overrides) -> int:
    """`laca config` alone: the group's commands (on stdout, as --help), and exit code 2."""
    print(args["help"])
    return 2


def policy_check(args: dict[str, Any], config_overrides: Overrides) -> int:
    from pathlib import Path

    from framework_core.app.wiring import build_policy_state
    from framework_core.config.load import load_config
    from framework_core.policy.check_cli import run_policy_check
    from framework_core.sandbox.git_runs import workspace_git_runs

    if not args["commands"] and not args["jsonl"]:
        raise ConfigError("give one or more commands, or --jsonl to read them from stdin")
    state = build_policy_state(load_config(Path.cwd(), config_overrides))
    return run_policy_check(list(args["commands"]), args["jsonl"], sys.stdin, sys.stdout, state,
                            git_runs=workspace_git_runs(Path.cwd()))


def config_init(args: dict[str, Any], _overrides: Overrides) -> int:
    from framework_core.app.config_cmds import init_user_config

    print(init_user_config(force=args["force"]))
    return 0


def config_show(args: dict[str, Any], config_overrides: Overrides) -> int:
    from framework_core.app.config_cmds import show_config

    print(show_config(config_overrides, all_providers=args["all_providers"]))
    return 0


def doctor(_args: dict[str, Any], config_overrides: Overrides) -> int:
    """The sandbox, then the provider: each part says what holds and what to do about what does not."""
    from framework_core.app.provider_check import run_provider_check
    from framework_core.config.load import load_config
    from framework_core.sandbox.doctor import run_doctor

    from framework_core.app.local_server import ensure_started
    from framework_core.app.startup import pick_provider
    from framework_core.errors import ConfigError

    loaded = load_config(overrides=config_overrides, lenient=True)
    for line in loaded.ignored:  # a broken file is said, and the rest is checked without it, as the REPL starts
        print(f"  ✗ config: {line}")
    sandbox = run_doctor(config_overrides, sys.stdout)
    print("Provider:")
    for line in pick_provider(loaded):  # the provider the REPL would use (only ANTHROPIC_API_KEY set: anthropic)
        print(f"  · {line}")
    try:
        address = ensure_started(loaded)  # `serve:` (the local provider): its server, for the check
    except ConfigError as exc:
        print(f"  ✗ {exc}")
        return max(sandbox, 1)
    if address:
        print(f"  ✓ llama.cpp's server started for the check at {address}")
    return max(sandbox, 1 if loaded.ignored else 0, run_provider_check(loaded, sys.stdout))


def audit_verify(args: dict[str, Any], _overrides: Overrides) -> int:
    from framework_core.app.audit_cmd import run_verify

    return run_verify(args["workspace"], sys.stdout)


def audit_replay(args: dict[str, Any], config_overrides: Overrides) -> int:
    from framework_core.app.audit_cmd import run_replay

    return run_replay(args["workspace"], args["since"], config_overrides, sys.stdout)
