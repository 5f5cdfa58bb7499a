"""Wrappers: programs that run the command after their options (env, nice, timeout, nohup, time, exec, command,
stdbuf …). Each entry is the wrapper's option grammar, from its manual, with the options that do more than
run the command (`effects`, they ask); how the inner command is found and judged is `policy/wrappers.py`.
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import EXACT, Entry, Grammar, Program


def _wrap(name: str, flags: str = "", values: str = "", long: dict[str, str] | None = None, positional: int = 0,
          effects: dict[str, str] | None = None, traits: frozenset[str] = frozenset()) -> Program:
    return Program(name, wrapper=Grammar(flags, values, long or {}, positional, effects or {}), traits=traits)


HELP = {"help": "flag", "version": "flag"}
ARGV0 = "sets the program's argv[0], which some programs use to pick what they do"
PROGRAMS: list[Entry] = [
    _wrap("env", "i0v", "uCSa", {**HELP, "ignore-environment": "i", "null": "0", "debug": "v", "unset": "u",
                                 "chdir": "C", "split-string": "S", "argv0": "a", "ignore-signal": "optional",
                                 "default-signal": "optional", "block-signal": "optional",
                                 "list-signal-handling": "flag"}, effects={"a": ARGV0},
          traits=EXACT | {"prints-env"}),
    _wrap("time", "pvqa", "of", {**HELP, "portability": "p", "verbose": "v", "quiet": "q", "append": "a",
                                 "output": "o", "format": "f"}, effects={"o": "time -o writes its report to a file"},
          traits=EXACT),
    _wrap("timeout", "v", "sk", {**HELP, "foreground": "flag", "preserve-status": "flag", "verbose": "v",
                                 "signal": "s", "kill-after": "k"}, positional=1, traits=EXACT),
    _wrap("nice", "", "n", {**HELP, "adjustment": "n"}, traits=EXACT),
    _wrap("nohup", "", "", dict(HELP), traits=EXACT),
    _wrap("stdbuf", "", "ioe", {**HELP, "input": "i", "output": "o", "error": "e"}),
    _wrap("ionice", "t", "cnpPu", {**HELP, "class": "c", "classdata": "n", "pid": "p", "pgid": "P", "uid": "u",
                                   "ignore": "t"},
          effects={"p": "changes another process's I/O priority", "P": "changes other processes' I/O priority",
                   "u": "changes other processes' I/O priority"}),
    _wrap("chrt", "abdefimorRv", "TPD", {**HELP, "all-tasks": "a", "batch": "b", "deadline": "d", "fifo": "f",
                                         "ext": "e", "idle": "i", "max": "m", "other": "o", "rr": "r",
                                         "reset-on-fork": "R", "verbose": "v", "pid": "p", "sched-runtime": "T",
                                         "sched-period": "P", "sched-deadline": "D"}, positional=1,
          effects={"p": "changes another process's scheduling"}),
    _wrap("taskset", "acp", "", {**HELP, "all-tasks": "a", "cpu-list": "c", "pid": "p"}, positional=1,
          effects={"p": "changes another process's CPU affinity"}),
    _wrap("flock", "sxunFoe", "wEc", {**HELP, "shared": "s", "exclusive": "x", "unlock": "u", "nonblock": "n",
                                      "no-fork": "F", "close": "o", "timeout": "w", "conflict-exit-code": "E",
                                      "command": "c", "verbose": "flag"}, positional=1),
    _wrap("setsid", "cfw", "", {**HELP, "ctty": "c", "fork": "f", "wait": "w"}),
    _wrap("command", "p", traits=EXACT), _wrap("builtin", traits=EXACT),
    _wrap("exec", "cl", "a", effects={"a": ARGV0}, traits=EXACT), _wrap("unbuffer", "p"),
    _wrap("caffeinate", "dimsu", "tw", effects={"w": "waits on another process"}), _wrap("nocorrect"),
    _wrap("noglob"), _wrap("busybox"), _wrap("coproc"),
]
