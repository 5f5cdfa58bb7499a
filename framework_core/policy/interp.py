"""Programs that run code: shells, language interpreters, eval, source, xargs, watch, make.

Shell code they are given (`bash -c -- CODE`, `eval`, `watch`) is classified like the command line itself;
code in other languages cannot be, so it asks. What they run from their standard input matters for
pipes: `curl … | sh` (or `| $SHELL`, `| python3 -`, `| make -f -`) runs what the network returned.
"""

from __future__ import annotations

import posixpath
import re

from framework_core.policy.catalog import entry, judge_of
from framework_core.policy.context import Ctx, Flow, Word, confirm, danger, shell_join
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.proc_paths import proc_readings
from framework_core.policy.targets import resolve
from framework_core.policy.words import static_output

#: The judges of catalog entries (`catalog/runners.py`) for programs that run code.
SHELL_JUDGES = {"shell", "plain-shell"}
CODE_JUDGES = SHELL_JUDGES | {"language", "eval", "source"}
STDIN_SCRIPTS = {"-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"}
#: Any spelling of standard input or another open descriptor (/dev//stdin, /dev/fd/3, /proc/self/fd/3 …).
FD_PATH = re.compile(r"/dev/(?:stdin|fd/\d+)|/proc/(?:self|thread-self|\d+)/(?:task/[^/]+/)?fd/\d+")


def is_stdin(arg: str) -> bool:
    """Does this script argument read what arrives on a descriptor (stdin, or one redirected like 3<&0)?"""
    if arg == "-":
        return True
    if not arg.startswith("/"):
        return bool(FD_PATH.fullmatch(arg))
    return any(FD_PATH.fullmatch(posixpath.normpath(p)) for p, _ in proc_readings("/" + arg.lstrip("/"), None))


def network_fd(arg: str, ctx: Ctx) -> bool:
    """/dev/fd/N (any spelling) where N was opened on what the network returned (`3< <(curl …)`)."""
    m = re.search(r"/fd/+(\d+)$", arg)
    return m is not None and is_stdin(arg) and m.group(1) in ctx.net_fds


def _family(name: str) -> str:
    for fam in ("python", "node", "pypy"):
        if name.startswith(fam):
            return "python" if fam == "pypy" else fam
    return {"nodejs": "node", "nvim": "vim", "vi": "vim", "luajit": "lua"}.get(name, name)


def shell(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    """sh/bash/zsh …: -c CODE (after any options and `--`) is classified; a script or stdin asks."""
    args = argv[1:]
    i, has_c, stdin, plain = 0, False, False, judge_of(argv[0]) == "plain-shell"
    while i < len(args) and args[i].startswith(("-", "+")) and args[i] not in ("-", "--"):
        a = args[i]
        plain = plain and (a in ("--norc", "--noprofile") or (not a.startswith("--") and set(a[1:]) <= set("ceuxfo")))
        if a.startswith("--"):
            if a in ("--rcfile", "--init-file"):
                i += 1
        elif "c" in a[1:]:
            has_c = True
        elif "s" in a[1:]:
            stdin = True
        if a[1:] in ("o", "O") and not a.startswith("--"):
            i += 1
        i += 1
    if i < len(args) and args[i] == "--":
        i += 1
    if has_c:
        if i >= len(args):
            return confirm(argv, "runs a shell"), Flow()
        inner, flow = ctx.nested(args[i])
        if words[1 + i].flow.network:
            return danger(argv, "runs what a network fetch returned"), flow
        if plain and inner.level == Level.SAFE and not words[1 + i].dynamic:
            return inner, flow
        return Verdict.combine([inner, confirm(argv, "runs a shell")]), flow
    if i < len(args) and network_fd(args[i], ctx):
        return danger(argv, "runs what a network fetch returned"), Flow()
    if stdin or i >= len(args) or is_stdin(args[i]):
        return confirm(argv, f"{argv[0]} runs commands from its input"), Flow(runs_input=True)
    return _script(argv, words, 1 + i, ctx)


def _script(argv: list[str], words: list[Word], idx: int, ctx: Ctx) -> tuple[Verdict, Flow]:
    w = words[idx]
    if w.flow.network:
        return danger(argv, f"runs a script that {argv[0]} reads from the network"), Flow()
    printed = static_output(w.text[2:-1]) if w.text.startswith("<(") and w.text.endswith(")") else None
    if printed is not None and judge_of(argv[0]) in SHELL_JUDGES | {"source"}:  # bash <(echo 'rm -rf ~')
        inner, flow = ctx.nested(printed)
        return Verdict.combine([inner, confirm(argv, f"{argv[0]} runs a generated script")]), flow
    for t in resolve(w, ctx):
        if any(t.path == d or t.path.startswith(d.rstrip("/") + "/") for d in ctx.downloaded):
            return danger(argv, f"runs {w.text}, which this command downloaded"), Flow()
    return confirm(argv, f"{argv[0]} runs the script {w.text}"), Flow()


#: Modules that fetch packages or serve (`python -m pip install`, `python -m build` fetches its build backend).
NETWORK_MODULES = {"http.server", "build", "twine", "pipx", "poetry", "uv", "pdm", "hatch", "conda", "ensurepip"}


def module_uses_network(rest: list[str]) -> bool:
    from framework_core.policy.network import uses_network

    if not rest:
        return False
    module = rest[0]
    if module in ("pip", "pip3"):
        return uses_network(["pip", *rest[1:]])
    return module in NETWORK_MODULES or (module == "uv" and uses_network(["uv", *rest[1:]]))


def language(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    """python, node, perl …: the code is in another language, so it asks; network input is Dangerous."""
    name = _family(argv[0])
    if any(w.flow.network or set(w.names) & ctx.fetched for w in words[1:]):
        return danger(argv, f"{argv[0]} runs code that came from the network"), Flow()
    from framework_core.policy.network import uses_network

    if uses_network(argv):  # bun install, deno cache …: a package manager as much as a language
        return confirm(argv, f"{argv[0]} {argv[1] if len(argv) > 1 else ''} fetches packages", network=True), Flow()
    family = entry(name)
    code_opts = family.code if family is not None else ()
    args = argv[1:]
    for i, a in enumerate(args):
        if a in code_opts or any(a.startswith(o) and len(o) == 2 and len(a) > 2 for o in code_opts):
            what = "a module from the working directory first" if a == "-m" else "inline code"
            network = a == "-m" and module_uses_network(args[i + 1:])
            code = words[2 + i] if a in code_opts and 2 + i < len(words) else words[1 + i]
            # code computed at run time (perl -e "$(cat)") may be what arrives on standard input
            return confirm(argv, f"{argv[0]} runs {what}", network=network), Flow(runs_input=code.dynamic)
        if network_fd(a, ctx):
            return danger(argv, "runs what a network fetch returned"), Flow()
        if not a.startswith("-"):
            if is_stdin(a):
                break
            return _script(argv, words, 1 + i, ctx)
    return confirm(argv, f"{argv[0]} runs code from its input"), Flow(runs_input=True)


def eval_(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    if any(w.flow.network or set(w.names) & ctx.fetched for w in words[1:]):
        return danger(argv, "eval runs what a network fetch returned"), Flow()
    inner, flow = ctx.nested(" ".join(argv[1:]))
    subs = any(w.dynamic for w in words[1:])
    return Verdict.combine([inner, confirm(argv, "eval runs a constructed command")]), Flow(runs_input=subs)


def source(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    if len(argv) < 2:
        return confirm(argv, "source without a file"), Flow()
    if is_stdin(argv[1]):
        return confirm(argv, "runs commands from its input in this shell"), Flow(runs_input=True)
    verdict, _ = _script(argv, words, 1, ctx)
    return Verdict.combine([verdict, confirm(argv, "runs a script in this shell")]), Flow()


def xargs(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[list[Word], Verdict, Flow]:
    """The inner command xargs runs with arguments from its input; the caller classifies it."""
    value_opts = {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--arg-file", "--delimiter", "--max-args",
                  "--max-procs", "--replace", "--eof", "--max-lines", "--max-chars", "-i"}
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        i += 2 if a in value_opts else 1
        if a == "--":
            break
    unknown = next((a for a in argv[1:i] if not _xargs_option_known(a, value_opts)), None)
    inner = words[i:] or [Word("echo")]
    if unknown is not None:  # an option read wrongly could hide where the command starts
        return inner, confirm(argv, f"xargs {unknown} is not an option LACA knows for xargs"), Flow(runs_input=True)
    runs = runs_code(inner[0].text.rsplit("/", 1)[-1]) or inner[0].dynamic
    return inner, confirm(argv, "xargs runs a command with arguments from its input"), Flow(runs_input=runs)


XARGS_FLAGS = {"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p", "--interactive", "-x", "--exit",
               "-o", "--open-tty", "--show-limits", "--"}
XARGS_ATTACHED = ("-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "-i", "-l", "-e", "--arg-file=", "--delimiter=",
                  "--max-args=", "--max-procs=", "--replace", "--eof", "--max-lines", "--max-chars=")


def _xargs_option_known(a: str, value_opts: set[str]) -> bool:
    """GNU xargs's options, from its manual (values attached or in the next word; clusters of flags)."""
    if a in XARGS_FLAGS or a in value_opts or a.startswith(XARGS_ATTACHED):
        return True
    return not a.startswith("--") and all("-" + c in XARGS_FLAGS for c in a[1:])


def make(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    args = argv[1:]
    stdin = any((a in ("-f", "--file", "--makefile") and args[i + 1:i + 2] and is_stdin(args[i + 1])) or
                a in ("-f-", "--file=-", "--makefile=-") for i, a in enumerate(args))
    return confirm(argv, "make runs the recipes of a Makefile"), Flow(runs_input=stdin)


def watch(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-n", "--interval", "-q", "--equexit") else 1
    inner, flow = ctx.nested(shell_join(args[i:]) if "-x" in args or "--exec" in args else " ".join(args[i:]))
    return Verdict.combine([inner, confirm(argv, "watch runs a command repeatedly")]), flow


def runs_code(name: str) -> bool:
    """A shell, a language, eval or source: what it is given is code it runs."""
    return judge_of(name) in CODE_JUDGES


def runner(argv: list[str], words: list[Word], ctx: Ctx, judge: str) -> tuple[Verdict, Flow] | None:
    """The judge a catalog entry names for a program that runs code (a versioned name such as python3.12 is
    judged as its family's language)."""
    if judge in SHELL_JUDGES:
        return shell(argv, words, ctx)
    run = {"eval": eval_, "source": source, "make": make, "watch": watch, "language": language}.get(judge)
    if run is not None:
        return run(argv, words, ctx)
    if judge_of(_family(argv[0])) == "language":
        return language(argv, words, ctx)
    return None


