"""Wrapper programs that run another command (env, nice, timeout, nohup, exec, command, stdbuf …).

The inner command is judged as if it stood alone, plus what the wrapper adds: `env NAME=value` sets the
environment like a prefix assignment, `env -S` splits a string into words, `env -C DIR` changes directory.
"""

from __future__ import annotations

import shlex

from framework_core.policy.builtins import prefix_problem
from framework_core.policy.context import Ctx, Word, confirm
from framework_core.policy.known import program_name
from framework_core.policy.levels import Verdict
from framework_core.policy.targets import resolve

VALUE_OPTS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"},
    "nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "--class", "--classdata"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"}, "stdbuf": {"-i", "-o", "-e"}, "exec": {"-a"},
    "chrt": set(), "taskset": {"-c", "--cpu-list"}, "caffeinate": {"-t", "-w"}, "flock": {"-w", "--timeout", "-E",
                                                                                        "--conflict-exit-code"},
}
WRAPPERS = {"env", "nice", "timeout", "nohup", "command", "builtin", "exec", "time", "stdbuf", "ionice", "setsid",
            "chrt", "taskset", "unbuffer", "caffeinate", "nocorrect", "noglob", "flock", "busybox", "coproc"}
POSITIONAL = {"timeout": 1, "flock": 1, "chrt": 1}


def unwrap(words: list[Word], ctx: Ctx) -> tuple[list[Word], list[Verdict], list[str]]:
    """(the inner command's words, what the wrappers add, the wrappers seen)."""
    verdicts: list[Verdict] = []
    seen: list[str] = []
    while words:
        name = program_name(words[0])
        if name not in WRAPPERS or (name == "command" and len(words) > 1 and words[1].text in ("-v", "-V")):
            break
        seen.append(name)
        rest = words[1:]
        if name == "flock":
            rest = _flock(rest)
            words = rest
            continue
        value_opts = VALUE_OPTS.get(name, set())
        while rest and (rest[0].text.startswith("-") or (name == "env" and "=" in rest[0].text)):
            opt = rest.pop(0)
            if opt.text == "--":
                break
            if name == "env" and "=" in opt.text and not opt.text.startswith("-"):
                key, _, value = opt.text.partition("=")
                why = prefix_problem(key, value)
                if why:
                    verdicts.append(confirm([w.text for w in words], why))
                continue
            if opt.text in value_opts and rest:
                arg = rest.pop(0)
                if name == "env" and opt.text in ("-S", "--split-string"):
                    rest = [Word(t) for t in _split(arg.text)] + rest
                elif name == "env" and opt.text in ("-C", "--chdir"):
                    targets = resolve(arg, ctx)
                    ctx.cwd = targets[0].path if len(targets) == 1 and not targets[0].unknown else None
            elif name == "env" and opt.text.startswith("--split-string="):
                rest = [Word(t) for t in _split(opt.text.split("=", 1)[1])] + rest
        skip = POSITIONAL.get(name, 0)
        if name in ("nice", "taskset", "chrt") and rest and rest[0].text.lstrip("-").replace("x", "").isalnum() \
                and program_name(rest[0]) not in WRAPPERS and rest[0].text[:1].isdigit():
            skip = 1
        rest = rest[skip:]
        words = rest
    return words, verdicts, seen


def _flock(rest: list[Word]) -> list[Word]:
    """flock [options] FILE COMMAND…, or with -c CODE anywhere: the command it runs."""
    for i, w in enumerate(rest[:-1]):
        if w.text in ("-c", "--command"):
            return [Word("sh"), Word("-c"), rest[i + 1]]
    i = 0
    while i < len(rest) and rest[i].text.startswith("-"):
        i += 2 if rest[i].text in VALUE_OPTS["flock"] else 1
    return rest[i + 1:]


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
