"""Command line: the argparse parsers built from the tables in `cli_options.py`, and the subcommands.

`laca [options] [MESSAGE …]` starts the REPL or one turn (`entry.run_root`); `laca [options] COMMAND …` runs a
subcommand, with the options before it applied to the config it reads. A usage error is one line naming the
problem and where the usage is (exit code 2).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, NoReturn

from framework_core.app.cli_options import COMMANDS, GROUPS, OPTIONS, command_start
from framework_core.errors import ConfigError, LacaError

if TYPE_CHECKING:
    from framework_core.config.load import Overrides

Handler = Callable[[argparse.Namespace, "Overrides"], int]

EPILOG = """examples:
  laca                                 start the REPL in this directory (the workspace)
  laca "fix the failing test"          the REPL, starting with that message
  laca --provider anthropic            chat through Anthropic (needs ANTHROPIC_API_KEY)
  laca --provider ollama --model qwen2.5-coder   a local OpenAI-compatible server
  laca -p "summarise README.md"        one turn, answer on stdout
  git diff | laca -p - --output-format json
  laca --continue                      resume the latest session of this workspace
  laca policy check 'rm -rf ~'         explain how a command would be treated
  laca config show                     the effective config, with each value's source
  laca doctor                          the sandbox here, and whether the provider works end to end
  laca audit verify                    check this workspace's audit log of tool calls is unchanged

exit codes: 0 ok, 1 runtime error, 2 usage or config error, 3 (-p) a call needed an approval nobody could
give, 4 (-p) stopped by the tool-round limit, 130 interrupted.
"""


class UsageError(LacaError):
    """A command line argparse cannot read: printed as one line, exit code 2."""

    exit_code = 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        where = self.prog.removeprefix("laca").strip()
        if message.endswith("expected one argument"):  # or its value starts with - (`-p -x`)
            name = message.split(":")[0].split("/")[-1].removeprefix("argument ")
            message += f" (a value that starts with - is given with =, as in {name}=-x)"
        raise UsageError(f"{where + ': ' if where else ''}{message}. See {self.prog} --help.")


class Parsed(NamedTuple):
    values: dict[str, Any]  # the root options (dest → value) and "message"
    command: Handler | None = None  # a subcommand, or None for the REPL / -p
    args: argparse.Namespace = argparse.Namespace()  # the subcommand's own arguments (none without one)


def root_parser() -> Parser:
    parser = Parser(prog="laca", allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter,
                    usage="laca [options] [MESSAGE ...]\n       laca [options] COMMAND [args]",
                    description="LACA: a terminal AI agent that asks before it acts.", epilog=EPILOG)
    for opt in OPTIONS:
        parser.add_argument(*opt.decls, **opt.argparse_kwargs())
    parser.add_argument("words", nargs="*", metavar="MESSAGE",
                        help="Start the REPL with this message (the words are joined; after -- even ones that "
                             "start with -).")
    commands = parser.add_argument_group("commands (laca COMMAND --help for each)")
    width = max(len(" ".join(c.path + (c.usage_hint,))) for c in COMMANDS) + 2
    commands.description = "\n".join(f"{' '.join(c.path + (c.usage_hint,)):{width}}{c.summary}" for c in COMMANDS)
    return parser


def command_parser() -> Parser:
    """The subcommands' tree: `policy check`, `config init|show`, `doctor`."""
    top = Parser(prog="laca", allow_abbrev=False, add_help=False)
    top_sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    groups: dict[str, Any] = {}
    for command in COMMANDS:
        *group, name = command.path
        if group and group[0] not in groups:
            group_parser = top_sub.add_parser(group[0], help=GROUPS[group[0]], description=GROUPS[group[0]],
                                              allow_abbrev=False)
            group_parser.set_defaults(run=None, leaf=group_parser)
            groups[group[0]] = group_parser.add_subparsers(metavar="COMMAND")
        parent = groups[group[0]] if group else top_sub
        parser = parent.add_parser(name, help=command.summary, allow_abbrev=False,
                                   description=f"{command.summary} {command.details}".strip())
        for arg in command.args:
            parser.add_argument(*arg.decls, **arg.kwargs)
        parser.set_defaults(run=HANDLERS[command.path], leaf=parser)
    return top


def parse(argv: list[str]) -> Parsed:
    """Raises UsageError for what cannot be read; `--help` prints and exits (SystemExit 0)."""
    start = command_start(argv)
    head = argv if start is None else argv[:start]
    words: list[str] = []
    if "--" in head:  # argparse's intermixed parsing would read options after `--`: they are message words
        head, words = head[:head.index("--")], head[head.index("--") + 1:]
    namespace = root_parser().parse_intermixed_args(head)
    values = vars(namespace)
    words = values.pop("words") + words
    values["message"] = " ".join(words) if words else None
    if start is None:
        return Parsed(values)
    args, extra = command_parser().parse_known_args(argv[start:])
    if extra:  # said by the subcommand's own parser, so that the message names it
        args.leaf.error(f"unrecognized arguments: {' '.join(extra)}")
    return Parsed(values, args.run or _group_help, args)


def overrides(values: dict[str, Any]) -> Overrides:
    """The root options that change the config, for the REPL, -p and the subcommands alike."""
    from framework_core.config.load import Overrides

    return Overrides(config_path=values["config"], provider=values["provider"], model=values["model"],
                     persona=values["persona"], sandbox=values["sandbox"], trust=bool(values["trust"]))


# ---- the subcommands: each gets its own arguments and the config overrides, and returns an exit code -----------

def _group_help(args: argparse.Namespace, _overrides: Overrides) -> int:
    """`laca config` alone: the group's commands (on stdout, as --help), and exit code 2."""
    args.leaf.print_help()
    return 2


def policy_check(args: argparse.Namespace, config_overrides: Overrides) -> int:
    from pathlib import Path

    from framework_core.config.load import load_config
    from framework_core.policy.check_cli import run_policy_check
    from framework_core.app.wiring import build_policy_state

    if not args.commands and not args.jsonl:
        raise ConfigError("give one or more commands, or --jsonl to read them from stdin")
    state = build_policy_state(load_config(Path.cwd(), config_overrides))
    return run_policy_check(list(args.commands), args.jsonl, sys.stdin, sys.stdout, state)


def config_init(args: argparse.Namespace, _overrides: Overrides) -> int:
    from framework_core.app.config_cmds import init_user_config

    print(init_user_config(force=args.force))
    return 0


def config_show(args: argparse.Namespace, config_overrides: Overrides) -> int:
    from framework_core.app.config_cmds import show_config

    print(show_config(config_overrides, all_providers=args.all_providers))
    return 0


def doctor(_args: argparse.Namespace, config_overrides: Overrides) -> int:
    """The sandbox, then the provider: each part says what holds and what to do about what does not."""
    from framework_core.app.provider_check import run_provider_check
    from framework_core.config.load import load_config
    from framework_core.sandbox.doctor import run_doctor

    sandbox = run_doctor(config_overrides, sys.stdout)
    print("Provider:")
    return max(sandbox, run_provider_check(load_config(overrides=config_overrides), sys.stdout))


def audit_verify(args: argparse.Namespace, _overrides: Overrides) -> int:
    from framework_core.app.audit_cmd import run_verify

    return run_verify(args.workspace, sys.stdout)


def audit_replay(args: argparse.Namespace, config_overrides: Overrides) -> int:
    from framework_core.app.audit_cmd import run_replay

    return run_replay(args.workspace, args.since, config_overrides, sys.stdout)


HANDLERS: dict[tuple[str, ...], Handler] = {
    ("policy", "check"): policy_check, ("config", "init"): config_init, ("config", "show"): config_show,
    ("audit", "verify"): audit_verify, ("audit", "replay"): audit_replay, ("doctor",): doctor,
}
