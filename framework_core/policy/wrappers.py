"""Wrapper programs that run another command (env, nice, timeout, nohup, time, exec, command, stdbuf …).

Each wrapper's options are read with its own grammar (from its manual): short options in clusters, a value
option taking the rest of its cluster or the next word, GNU long options with `=` or the next word, and
unique abbreviations of long options (`--out=` is `--output=`). The inner command is judged as if it stood
alone, plus what the wrapper adds: `env NAME=value` sets the environment like a prefix assignment, `env -S`
splits a string into words, `env -C DIR` changes directory, `time -o FILE` writes FILE, `nohup` may write
`nohup.out`, `flock FILE` creates FILE, `-p PID` forms change another process. An option the grammar does
not know asks (the rest is still unwrapped, so a Dangerous inner command stays Dangerous).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from framework_core.policy.builtins import prefix_problem
from framework_core.policy.catalog import entry
from framework_core.policy.catalog.entry import Grammar
from framework_core.policy.context import Ctx, Word, confirm
from framework_core.policy.known import program_name
from framework_core.policy.levels import Verdict
from framework_core.policy.targets import resolve


@dataclass
class _Parsed:
    opts: list[tuple[str, str | None]] = field(default_factory=list)  # (short name or long kind name, value)
    rest: list[Word] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def _long(g: Grammar, text: str) -> tuple[str, str] | None:
    """(the option's canonical name, its kind) for `--name`, allowing a unique abbreviation."""
    if text in g.long:
        return text, g.long[text]
    matches = [n for n in g.long if n.startswith(text)]
    return (matches[0], g.long[matches[0]]) if len(matches) == 1 and text else None


def grammar(name: str | None) -> Grammar | None:
    """The wrapper grammar of this program's catalog entry (`catalog/wrappers.py`), if it is a wrapper."""
    found = entry(name) if name else None
    return found.wrapper if found is not None else None


def _parse(name: str, words: list[Word]) -> _Parsed:
    g, out, i = grammar(name) or Grammar(), _Parsed(), 0
    while i < len(words):
        w = words[i].text
        if w == "--":
            i += 1
            break
        if name == "env" and "=" in w and not w.startswith("-"):
            out.opts.append(("=", w))
            i += 1
            continue
        if name == "nice" and re.fullmatch(r"-[-+]?\d+", w):  # the old form: nice -10 cmd
            i += 1
            continue
        if not w.startswith("-") or w == "-":
            break
        i += 1
        if w.startswith("--"):
            key, eq, value = w[2:].partition("=")
            found = _long(g, key)
            if found is None:
                out.unknown.append(w)
                continue
            canon, kind = found
            short = kind if len(kind) == 1 else canon
            takes = kind == "value" or (len(kind) == 1 and kind in g.values)
            if takes and not eq and i < len(words):
                value, i = words[i].text, i + 1
            out.opts.append((short, value if (eq or takes) else None))
            continue
        j = 1
        while j < len(w):
            c = w[j]
            if c in g.values:
                value = w[j + 1:]
                if not value and i < len(words):
                    value, i = words[i].text, i + 1
                out.opts.append((c, value))
                break
            if c in g.flags:
                out.opts.append((c, None))
            else:
                out.unknown.append(f"-{c}")
            j += 1
    out.rest = words[i:]
    return out


def unwrap(words: list[Word], ctx: Ctx) -> tuple[list[Word], list[Verdict], list[str]]:
    """(the inner command's words, what the wrappers add, the wrappers seen)."""
    verdicts: list[Verdict] = []
    seen: list[str] = []
    while words:
        name = program_name(words[0])
        g = grammar(name)
        if name is None or g is None or (name == "command" and len(words) > 1 and words[1].text in ("-v", "-V")):
            break
        seen.append(name)
        argv = [w.text for w in words]
        p = _parse(name, words[1:])
        if p.unknown:
            verdicts.append(confirm(argv, f"{name} {p.unknown[0]} is not an option LACA knows for {name}"))
        rest = p.rest
        for opt, value in p.opts:
            why = g.effects.get(opt)
            if why:
                verdicts.append(confirm(argv, why))
            elif name == "env":
                rest = _env_option(opt, value, rest, argv, verdicts, ctx)
        if name == "flock":
            words = _flock(p, argv, verdicts)
            continue
        if name == "nohup":
            verdicts.append(confirm(argv, "nohup writes nohup.out when its output is a terminal"))
        skip = g.positional
        if name == "chrt" and any(o == "m" for o, _ in p.opts):
            skip = 0
        words = rest[skip:]
    return words, verdicts, seen


def _env_option(opt: str, value: str | None, rest: list[Word], argv: list[str], verdicts: list[Verdict],
                ctx: Ctx) -> list[Word]:
    if opt == "=" and value is not None:
        key, _, val = value.partition("=")
        why = prefix_problem(key, val)
        if why:
            verdicts.append(confirm(argv, why))
    elif opt == "S" and value is not None:
        if "$" in value or "\\c" in value:
            verdicts.append(confirm(argv, "env -S expands variables in its string"))
        split = [Word(t) for t in _split(value)]
        inner = _parse("env", split)  # the string may hold more options and NAME=value words
        if inner.unknown:
            verdicts.append(confirm(argv, f"env {inner.unknown[0]} is not an option LACA knows for env"))
        for o, v in inner.opts:
            rest = _env_option(o, v, rest, argv, verdicts, ctx)
        return inner.rest + rest
    elif opt == "C" and value is not None:
        targets = resolve(Word(value, tilde=value.startswith("~")), ctx) if "$" not in value else []
        ctx.cwd = targets[0].path if len(targets) == 1 and not targets[0].unknown else None
    return rest


def _flock(p: _Parsed, argv: list[str], verdicts: list[Verdict]) -> list[Word]:
    """flock [options] FILE|FD COMMAND…, or with -c CODE: the command it runs. A FILE is created."""
    target = p.rest[0].text if p.rest else ""
    if target and not target.isdigit():
        verdicts.append(confirm(argv, f"flock creates {target} when it does not exist"))
    code = next((v for o, v in p.opts if o == "c" and v is not None), None)
    if code is not None:
        return [Word("sh"), Word("-c"), Word(code)]
    return p.rest[1:]


_ENV_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "#": "#", "$": "$", "\\": "\\",
                '"': '"', "'": "'"}


def _split(text: str) -> list[str]:
    r"""`env -S STRING` split as env splits it (GNU env's manual, "-S/--split-string"), not as a shell would:
    whitespace and `\_` outside double quotes separate words, `\_` inside them is a space, `\t \n \f \r \v`
    and `\\ \" \' \# \$` are escapes, single quotes keep all but `\\` and `\'`, `#` starting a word comments out
    the rest, `\c` ends the string, `${VAR}` is kept as written (it expands at run time). A string env would
    refuse is split on whitespace (the words are still judged)."""
    words: list[str] = []
    cur: list[str] = []
    started, quote, i = False, "", 0
    while i < len(text):
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
            elif c == "\\" and text[i + 1:i + 2] in ("\\", "'"):
                cur.append(text[i + 1])
                i += 1
            else:
                cur.append(c)
        elif c == "\\":
            e = text[i + 1:i + 2]
            if e == "c":
                break
            if e == "_":
                if quote:
                    cur.append(" ")
                elif started:
                    words.append("".join(cur))
                    cur, started = [], False
            elif e in _ENV_ESCAPES:
                cur.append(_ENV_ESCAPES[e])
                started = True
            else:
                return text.split()
            i += 1
        elif quote == '"':
            if c == '"':
                quote = ""
            else:
                cur.append(c)
        elif c in "'\"":
            quote, started = c, True
        elif c in " \t\n\v\f\r":
            if started:
                words.append("".join(cur))
                cur, started = [], False
        elif c == "#" and not started:
            break
        else:
            cur.append(c)
            started = True
        i += 1
    if quote:
        return text.split()
    if started:
        words.append("".join(cur))
    return words
