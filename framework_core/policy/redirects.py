"""Redirections and here-documents: what flows into a command's input, and what it writes.

A here-document with an unquoted delimiter is expanded by bash, so its substitutions run; they are
classified here (`cat <<EOF` / `$(rm -rf ~)` / `EOF` is Dangerous). When the command runs its input as
code (a shell, `python3 -`), the body itself is classified as a script.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Callable

from framework_core.policy.builtins import arith_problem
from framework_core.policy.context import Ctx, Flow, confirm, danger
from framework_core.policy.levels import Verdict
from framework_core.policy.network import SECRET_VAR
from framework_core.policy.paths import known_variable, read_location_problem, secret_reason, show, write_reason
from framework_core.policy.targets import resolve
from framework_core.policy.words import ask, check_braced, text_of, words_of

Walker = Callable[[Any, Ctx], Flow]
NET_DEVICE = ("/dev/tcp/", "/dev/udp/")
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "-", "/dev/tty"}
BACKTICK = re.compile(r"`((?:\\.|[^`\\])*)`")


def _op(node: Any) -> str:
    return next((text_of(c) for c in node.children if not c.is_named), "")


def is_input(node: Any) -> bool:
    return node.type in ("herestring_redirect", "heredoc_redirect") or _op(node) in ("<", "<&", "<<<")


def _fd(node: Any) -> str:
    return next((text_of(c) for c in node.named_children if c.type == "file_descriptor"), "")


def _network_sink(node: Any, target: str, produced: Flow, ctx: Ctx) -> None:
    """Writing to /dev/tcp/… (or a descriptor opened on it) sends data over the network."""
    if produced.secret:
        ctx.add(danger([_op(node), target], f"sends {produced.secret} over the network", network=True))
    else:
        ctx.add(confirm([_op(node), target], "talks to the network through bash's /dev/tcp", network=True))


def herestring_text(node: Any) -> str | None:
    """The text a herestring feeds in, when it is static (`sh <<< 'rm -rf ~'` runs exactly that)."""
    if node.type != "herestring_redirect" or not node.named_children:
        return None
    raw = text_of(node.named_children[-1])
    if "$" in raw or "`" in raw:
        return None
    try:
        return " ".join(shlex.split(raw))
    except ValueError:
        return None


def read_source(node: Any, ctx: Ctx, walk: Walker) -> Flow:
    """The data a `<` redirection or herestring feeds in: a secret file, a substitution's output …"""
    dest = node.child_by_field_name("destination") or (node.named_children[-1] if node.named_children else None)
    if dest is None:
        return Flow()
    if _op(node) == "<&" and text_of(dest) in ctx.net_fds:
        return Flow(network=True)
    flow = Flow()
    for w in words_of(dest, ctx, walk):
        if w.text.startswith(NET_DEVICE):
            _network_sink(node, w.text, Flow(), ctx)
            ctx.net_fds.add(_fd(node) or "0")
            flow = flow | Flow(network=True)
            continue
        flow = flow | w.flow
        if w.flow.network and _fd(node):  # 3< <(curl …): descriptor 3 now carries what the network returned
            ctx.net_fds.add(_fd(node))
        if node.type == "herestring_redirect":
            m = SECRET_VAR.search(w.text)
            if m:
                flow = flow | Flow(secret=f"the secret variable ${m.group(1)}")
            continue
        for t in resolve(w, ctx):
            why = secret_reason(t.path, t.glob) if t.path and not t.unknown else None
            if t.path in ctx.tainted:
                why = f"{show(t.path)}, which holds {ctx.tainted[t.path]}"
            if why:
                ctx.add(confirm(["<", w.text], f"reads {why}"))
                flow = flow | Flow(secret=why)
            elif not w.flow.secret and not w.listed and not w.text.startswith(("<(", ">(")):
                where = f"a path known only at run time ({t.unknown})" if t.unknown else \
                    read_location_problem(t.path, t.glob)
                if where:
                    ctx.add(confirm(["<", w.text], f"reads {where}"))
            if t.path in ctx.downloaded:
                flow = flow | Flow(network=True)
    return flow


def write_target(node: Any, ctx: Ctx, walk: Walker, produced: Flow) -> None:
    """An output redirection: judge the file written, remember what it now holds."""
    op = _op(node)
    dest = node.child_by_field_name("destination")
    if dest is not None and op.endswith("&") and text_of(dest) in ctx.net_fds:
        _network_sink(node, f"&{text_of(dest)}", produced, ctx)
        return
    if dest is None or dest.type == "number" or op in (">&-", "<&-") or (op.endswith("&") and dest.type == "word"
                                                                         and text_of(dest).isdigit()):
        return
    for w in words_of(dest, ctx, walk):
        if w.text.startswith(NET_DEVICE):
            _network_sink(node, w.text, produced, ctx)
            ctx.net_fds.add(_fd(node) or "1")
            continue
        if w.flow.runs_input:  # > >(sh): what the command prints is run
            ctx.add(danger([op, w.text], "runs what a network fetch returned") if produced.network else
                    confirm([op, w.text], "feeds the output to a program that runs it as code"))
            continue
        if w.text in HARMLESS_TARGETS or w.text.startswith("/dev/fd/") or re.fullmatch(r"&?\d+-?", w.text):
            continue
        for t in resolve(w, ctx):
            if t.unknown:
                ctx.add(confirm([op, w.text], f"writes a file named only at run time ({t.unknown})"))
                continue
            bad, why = write_reason(t.path, t.glob)
            ctx.add(danger([op, w.text], why) if bad else confirm([op, w.text], why))
            if produced.secret:
                ctx.tainted[t.path] = produced.secret
            if produced.network:
                ctx.downloaded.add(t.path)


def _close(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the bracket matching text[i] (quotes inside are skipped), or len(text)."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c in ("'", '"') and open_ == "(":
            k = text.find(c, j + 1)
            j = len(text) if k < 0 else k + 1
            continue
        depth += c == open_
        depth -= c == close
        j += 1
        if depth == 0:
            return j
    return len(text)


def expansions(text: str) -> list[tuple[str, str]]:
    """The substitutions bash performs in an unquoted here-document: ("cmd" | "arith" | "braced" | "var", text)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif text.startswith("$((", i):
            end = _close(text, i + 1, "(", ")")
            out.append(("arith", text[i + 3:end - 2]))
            out += expansions(text[i + 3:end - 2])
            i = end
        elif text.startswith("$(", i):
            end = _close(text, i + 1, "(", ")")
            out.append(("cmd", text[i + 2:end - 1]))
            i = end
        elif c == "`":
            m = BACKTICK.match(text, i)
            end = m.end() if m else len(text)
            out.append(("cmd", m.group(1) if m else text[i + 1:]))
            i = end
        elif text.startswith("${", i):
            end = _close(text, i + 1, "{", "}")
            out.append(("braced", text[i:end]))
            out += expansions(text[i + 2:end - 1])
            i = end
        elif c == "$" and (m := re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1:])):
            out.append(("var", m.group(0)))
            i += 1 + m.end()
        else:
            i += 1
    return out


def heredoc_input(node: Any, ctx: Ctx, walk: Walker) -> tuple[Flow, str]:
    """(what the here-document feeds in, its text). Unquoted bodies have their substitutions classified."""
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    if body is None:
        return Flow(), ""
    text = text_of(body)
    if start is not None and any(q in text_of(start) for q in ("'", '"', "\\")):
        return Flow(), text
    return expanded_flow(text, ctx), text


def expanded_flow(text: str, ctx: Ctx) -> Flow:
    flow = Flow()
    for kind, inner in expansions(text):
        if kind == "cmd":
            verdict, sub = ctx.nested(inner)
            ctx.add(verdict)
            flow = flow | sub
        elif kind == "arith":
            why = arith_problem(inner, ctx)
            if why:
                ask(ctx, inner, why)
        elif kind == "braced":
            check_braced(inner, ctx)
            name = re.match(r"\$\{[#!]?([A-Za-z_][A-Za-z0-9_]*)", inner)
            flow = flow | _var_flow(name.group(1) if name else "", ctx)
        else:
            flow = flow | _var_flow(inner, ctx)
    return flow


def _var_flow(name: str, ctx: Ctx) -> Flow:
    if not known_variable(name) and name not in ctx.declared and name not in ctx.values and name not in ctx.arrays:
        ask(ctx, f"${name}", f"expands ${name}, a variable of the environment that may hold a secret")
    if name in ctx.tainted:
        return Flow(secret=f"${name}, which holds {ctx.tainted[name]}")
    if SECRET_VAR.match("$" + name):
        return Flow(secret=f"the secret variable ${name}")
    return Flow(network=name in ctx.fetched)


def feed(argv_text: str, stdin: Flow, consumer: Flow, ctx: Ctx, script: str | None) -> None:
    """What happens when `stdin` reaches a command that does `consumer`."""
    if stdin.secret and consumer.network:
        ctx.add(danger([argv_text], f"sends {stdin.secret} over the network", network=True))
    if consumer.runs_input:
        if stdin.network:
            ctx.add(danger([argv_text], "runs what a network fetch returned"))
        if script is not None:
            verdict, _ = ctx.nested(script)
            ctx.add(Verdict.combine([verdict, confirm([argv_text], "feeds a here-document to a program that runs "
                                                                    "it as code")]))

