"""Turn tree-sitter word nodes into `Word`s the way bash would expand them statically.

Quotes and escapes are removed, brace expansion and `$IFS` splitting applied, variables with a value known
from earlier in the command substituted. Substitutions inside a word are classified on the way (their
commands run), and what they do with data is kept on the word (`Word.flow`). Expansions that bash
evaluates as arithmetic (subscripts, `${x:off}`), indirect expansions and `${x@P}` ask.
"""

from __future__ import annotations

import codecs
import re
import shlex
from typing import Any, Callable

from framework_core.policy.paths import known_variable
from framework_core.policy.builtins import arith_problem, assignment_problem, subscript_problem
from framework_core.policy.context import Ctx, Flow, Word
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.network import SECRET_VAR

Walker = Callable[[Any, Ctx], Flow]
GLOB = re.compile(r"(?<!\\)[*?\[]")
BRACED = re.compile(r"\$\{([^{}]*)\}")
INDIRECT_OK = re.compile(r"![A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[@*]\])")
OFFSET = re.compile(r"#?[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?:(?![-=?+])(.+)")
SUBSCRIPT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[([^\]]*)\]")


def text_of(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""))


def ask(ctx: Ctx, what: str, why: str) -> None:
    ctx.add(Verdict(Level.NEEDS_CONFIRM, (f'"{what[:70]}": {why}',)))


ASSIGNING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^]]*\])?:?=")


def check_braced(raw: str, ctx: Ctx) -> None:
    """`${…}` forms bash evaluates: subscripts and offsets as arithmetic, `${!x}`, `${x@P}`, and `${x:=v}`,
    which assigns x."""
    for inner in BRACED.findall(raw):
        body = inner.lstrip("#")
        assigned = ASSIGNING.match(body)
        if assigned and assignment_problem(assigned.group(1)):
            ask(ctx, raw, assignment_problem(assigned.group(1)))
        if body.startswith("!") and not INDIRECT_OK.fullmatch(body):
            ask(ctx, raw, "an indirect expansion evaluates a name chosen at run time (a subscript there runs code)")
        elif body.endswith("@P"):
            ask(ctx, raw, "${x@P} expands a prompt string, which runs command substitutions")
        else:
            sub = SUBSCRIPT.match(body.lstrip("!"))
            why = subscript_problem(sub.group(1), ctx) if sub else ""
            off = OFFSET.fullmatch(body)
            why = why or (arith_problem(off.group(1).split(":")[0], ctx) if off else "")
            if why:
                ask(ctx, raw, why)


STATIC_OUTPUT = {"pwd": "$PWD", "whoami": "§", "logname": "§"}


def static_output(code: str) -> str | None:
    """What a trivial command prints, when that is known statically: echo/printf of plain words, pwd, whoami."""
    if any(c in code for c in "|;&<>$`(){}\n"):
        return None
    try:
        toks = shlex.split(code)
    except ValueError:
        return None
    if not toks:
        return None
    if toks[0] in STATIC_OUTPUT and len(toks) == 1:
        return STATIC_OUTPUT[toks[0]]
    if toks == ["id", "-un"]:
        return "§"
    if toks[0] == "echo":
        args = toks[1:]
        while args and args[0] in ("-n", "-e", "-E"):
            args = args[1:]
        return " ".join(args)
    if toks[0] == "printf" and len(toks) >= 2 and not toks[1].startswith("-"):
        fmt, args = toks[1], toks[2:]
        if "%" not in fmt.replace("%%", ""):
            return fmt.replace("%%", "%").replace("\\n", "\n")
        if re.fullmatch(r"%s(\\n)?", fmt) and args:
            return " ".join(args)
    return None


def _substitution(node: Any, ctx: Ctx, walk: Walker) -> Word:
    raw = text_of(node)
    sub = ctx.child()
    sub.depth = ctx.depth
    named = [c for c in node.named_children]
    if named and all(c.type == "file_redirect" for c in named):  # $(< file) reads the file
        from framework_core.policy.redirects import read_source

        flow = Flow()
        for c in named:
            flow = flow | read_source(c, sub, walk)
    else:
        flow = Flow()
        for c in named:
            flow = flow | walk(c, sub)
    ctx.absorb(sub)
    inner = raw[2:-1] if raw.startswith("$(") else raw[1:-1] if raw.startswith("`") else None
    known = static_output(inner) if inner is not None else None
    if known is not None:  # $(echo ~), `echo /`, $(whoami): the text it prints is known
        return Word(known, "$" in known, flow=flow, tilde=known.startswith("~"), glob=bool(GLOB.search(known)))
    listed = sub.lister_seen and raw.startswith("$(") and all(v.level == Level.SAFE for v in sub.verdicts)
    return Word(raw, dynamic=True, flow=flow, listed=listed, samples=sub.lister_samples if listed else ())


def word_of(node: Any, ctx: Ctx, walk: Walker) -> Word:
    t = node.type
    raw = text_of(node)
    if t in ("word", "number"):
        return Word(_unescape(raw), tilde=raw.startswith("~"), glob=bool(GLOB.search(raw)))
    if t == "raw_string":
        return Word(raw[1:-1], quoted=True)
    if t == "ansi_c_string":
        try:
            text = codecs.decode(raw[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape")
            return Word(text.split("\0", 1)[0], quoted=True)  # bash ends the word at a NUL byte
        except (UnicodeDecodeError, ValueError):
            return Word(raw, dynamic=True, quoted=True)
    if t == "string_content":
        return Word(raw.replace('\\"', '"').replace("\\\\", "\\").replace("\\$", "$").replace("\\`", "`"), quoted=True)
    if t in ("string", "translated_string", "concatenation"):
        parts = [word_of(c, ctx, walk) for c in node.children if c.is_named or c.type not in ('"', "$", "$\"")]
        parts = [p for p in parts if p.text or p.dynamic] or [Word("")]
        quoted = t != "concatenation" or any(p.quoted for p in parts)
        flow = Flow()
        for p in parts:
            flow = flow | p.flow
        return Word("".join(p.text for p in parts), any(p.dynamic for p in parts), quoted,
                    t == "concatenation" and parts[0].tilde, any(p.glob for p in parts), flow,
                    tuple(n for p in parts for n in p.names), len(parts) == 1 and parts[0].listed,
                    parts[0].samples if len(parts) == 1 else ())
    if t in ("simple_expansion", "expansion"):
        return _expansion(node, raw, ctx, walk)
    if t in ("command_substitution", "process_substitution"):
        if raw.startswith("$(("):  # arithmetic that tree-sitter read as a subshell
            why = arith_problem(raw[3:-2], ctx)
            if why:
                ask(ctx, raw, why)
            return Word(raw, dynamic=True)
        return _substitution(node, ctx, walk)
    if t == "arithmetic_expansion":
        why = arith_problem(raw[3:-2], ctx)
        if why:
            ask(ctx, raw, why)
        flow = Flow()
        for c in node.named_children:
            flow = flow | _walk_inside(c, ctx, walk)
        return Word(raw, dynamic=True, flow=flow)
    flow = _walk_inside(node, ctx, walk)
    return Word(raw, dynamic=True, flow=flow)


def _walk_inside(node: Any, ctx: Ctx, walk: Walker) -> Flow:
    flow = Flow()
    for c in node.named_children:
        if c.type in ("command_substitution", "process_substitution"):
            flow = flow | _substitution(c, ctx, walk).flow
        else:
            flow = flow | _walk_inside(c, ctx, walk)
    return flow


def _expansion(node: Any, raw: str, ctx: Ctx, walk: Walker) -> Word:
    found = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9#?*@$!-]", re.sub(r"^\$\{?[#!]?", "", raw))
    var = found.group(0) if found else ""
    if var == "IFS":
        return Word(" ", names=("IFS",))
    if raw.startswith("${"):
        check_braced(raw, ctx)
    flow = _walk_inside(node, ctx, walk)
    if var in ctx.tainted:
        flow = flow | Flow(secret=f"${var}, which holds {ctx.tainted[var]}")
    elif SECRET_VAR.match(raw):
        flow = flow | Flow(secret=f"the secret variable ${var}")
    if var in ctx.fetched:
        flow = flow | Flow(network=True)
    names_only = raw.startswith("${!") and raw.endswith(("*}", "@}", "@]}", "*]}"))  # ${!prefix*}: names, not values
    ours = var in ctx.declared or var in ctx.values or var in ctx.arrays
    if not names_only and not ours and not known_variable(var):
        ask(ctx, raw, f"expands ${var}, a variable of the environment that may hold a secret")
    return Word(raw, dynamic=True, flow=flow, names=(var,) if var else ())


SEQUENCE = re.compile(r"\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\}")


def _sequence(m: re.Match[str]) -> list[str]:
    """{1..5}, {a..e}, {10..1..2}: bash's sequence expression."""
    a, b, step = m.group(1), m.group(2), abs(int(m.group(3) or 1)) or 1
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        width = max(len(a), len(b)) if (a.lstrip("-").startswith("0") and len(a.lstrip("-")) > 1) or (
            b.lstrip("-").startswith("0") and len(b.lstrip("-")) > 1) else 0
        seq = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [str(n).zfill(width) for n in seq][:64]
    if a.isalpha() and b.isalpha():
        lo, hi = ord(a), ord(b)
        seq = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [chr(n) for n in seq][:64]
    return [m.group(0)]


def expand_braces(text: str, limit: int = 64) -> list[str]:
    """Bash brace expansion ({a,b} and {x..y}), breadth first and capped: a word with 40 braces is not 2**40 words."""
    done: list[str] = []
    todo = [text]
    while todo and len(done) + len(todo) <= limit:
        t = todo.pop(0)
        seq = SEQUENCE.search(t)
        m = re.search(r"\{([^{}]*,[^{}]*)\}", t)
        if seq and (not m or seq.start() < m.start()):
            todo += [t[: seq.start()] + item + t[seq.end():] for item in _sequence(seq)[:limit]]
            continue
        if not m:
            done.append(t)
            continue
        todo += [t[: m.start()] + alt + t[m.end():] for alt in m.group(1).split(",")]
    return (done + todo)[:limit]


ARRAY_ALL = re.compile(r'"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?|"?\$([@*])"?')


def words_of(node: Any, ctx: Ctx, walk: Walker) -> list[Word]:
    """One syntax node -> the argv words bash would produce (known variables, braces and $IFS applied)."""
    whole = ARRAY_ALL.fullmatch(text_of(node))
    if whole and (whole.group(1) or whole.group(2)) in ctx.arrays:  # "${a[@]}", "$@" with known elements
        return [Word(t, tilde=t.startswith("~"), glob=bool(GLOB.search(t)))
                for t in ctx.arrays[whole.group(1) or whole.group(2)]]
    w = word_of(node, ctx, walk)
    if node.type == "command_substitution" and not w.dynamic and not w.quoted:  # $(echo rm -rf /) splits
        return [Word(t, tilde=w.tilde and i == 0, glob=bool(GLOB.search(t))) for i, t in enumerate(w.text.split())] \
            or [Word("")]
    if node.type in ("simple_expansion", "expansion") and len(w.names) == 1 and w.names[0] in ctx.values:
        values = ctx.values[w.names[0]]
        if len(values) == 1 and re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", w.text):
            return [Word(v, glob=bool(GLOB.search(v))) for v in values[0].split()] or [Word("")]
    raw = text_of(node)
    if raw.startswith("${") or "${" in raw:
        check_braced(raw, ctx) if node.type not in ("expansion",) else None
    texts = expand_braces(w.text) if not w.quoted and "{" in w.text else [w.text]
    if "IFS" in w.names and not w.quoted:
        texts = [part for t in texts for part in t.split(" ") if part]
    return [Word(t, w.dynamic, w.quoted, w.tilde, w.glob, w.flow, w.names, w.listed, w.samples) for t in texts]
