"""Shell builtins and the arithmetic rule.

Builtins that execute code, define commands or print the shell's state ask: `jobs -x`, `hash`, `printf -v`,
`read` into subscripts, `declare -n`, `trap`, `alias`, `history -w`, `export -p` … A word that bash
evaluates as arithmetic (in `$(( ))`, `(( ))`, `let`, array subscripts, `[[ -eq ]]`, `${x:off}`) expands
variables recursively, and a value like `a[$(cmd)]` then runs `cmd`: any name there whose value is not a
known integer asks.
"""

from __future__ import annotations

import re

from framework_core.policy.context import Ctx, Word, confirm, safe
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import HOME
from framework_core.policy.targets import resolve

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
INT_SPECIALS = {"#", "?", "$", "!", "PPID", "BASHPID", "RANDOM", "SECONDS", "LINENO", "UID", "EUID", "SRANDOM",
                "EPOCHSECONDS"}
#: Assigning these changes what later commands run or read (PATH, loader, prompt and trace hooks …).
SENSITIVE = re.compile(r"PATH|.*PATH|LD_.*|DYLD_.*|BASH_.*|ENV|PS[0-9]|PROMPT_COMMAND|PROMPT_DIRTRIM|IFS|CDPATH|"
                       r"GLOBIGNORE|HOME|SHELLOPTS|BASHOPTS|PYTHON.*|NODE_.*|PERL.*|RUBY.*|GIT_.*|.*PAGER|.*EDITOR|"
                       r"VISUAL|LESS.*|HIST.*|TMPDIR|LOCPATH|GCONV_PATH|NLSPATH|MANOPT|BROWSER|.*ASKPASS|SHELL|"
                       r"XDG_.*|TAR_OPTIONS|GZIP|RIPGREP_CONFIG_PATH|DOCKER_.*|KUBECONFIG|PIP_.*|NPM_CONFIG_.*|"
                       r".*_OPTIONS|.*_OPTS|JAVA_.*|GNUPGHOME|MAGIC|TERMINFO.*|SUDO_.*|MAIL.*|OLDPWD|PWD|FPATH|"
                       r"INPUTRC|EXECIGNORE|COMP_.*|READLINE_.*|SSH_.*|GPG_.*|CARGO_.*|RUSTC.*|GO.*|CC|CXX|MAKE.*")
#: A command prefixed with these (`LANG=C sort`) is judged as the command alone.
HARMLESS_PREFIX = {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "TERM", "COLUMNS", "LINES", "FORCE_COLOR", "CLICOLOR",
                   "CLICOLOR_FORCE", "IFS", "CI", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
                   "GIT_TERMINAL_PROMPT", "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "TERM_PROGRAM"}
PAGER_VALUES = {"", "cat", "less", "more"}
SET_OPTS = {"-e", "-u", "-x", "-v", "-f", "-C", "-o", "+e", "+u", "+x", "+v", "-eu", "-ex", "-eux", "-euo", "-eo",
            "-uo", "-xe", "-ue", "-ux", "+o", "--"}
SET_OPTION_NAMES = {"pipefail", "errexit", "nounset", "xtrace", "verbose", "noglob", "noclobber"}


#: An arithmetic assignment: `x = 1`, `x += 1`, `x++`, `--x` (not `==`).
ARITH_ASSIGN = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                          r"([A-Za-z_]\w*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_]\w*)")


def prefix_problem(name: str, value: str) -> str:
    if name in HARMLESS_PREFIX or name.startswith("LC_"):
        return ""
    if name in ("PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER") and value in PAGER_VALUES:
        return ""
    return f"sets {name} for the command, which can change what it runs or reads"


def assignment_problem(name: str) -> str:
    if SENSITIVE.fullmatch(name):
        return f"sets {name}, which changes what later commands run or read"
    return ""


def arith_problem(text: str, ctx: Ctx, local: set[str] | frozenset[str] = frozenset()) -> str:
    """Why evaluating `text` as arithmetic is not known to be harmless ("" when it is)."""
    if "$(" in text or "`" in text:
        return "arithmetic on a command's output evaluates it as code"
    for name in ARITH_ASSIGN.findall(text):
        target = next(n for n in name if n)
        if assignment_problem(target):
            return assignment_problem(target)
    for name in NAME.findall(re.sub(r"\$\{?([#?$!])", " ", text)):
        if name in INT_SPECIALS or name in local:
            continue
        values = ctx.values.get(name)
        if values and all(re.fullmatch(r"-?\d+", v) for v in values):
            continue
        return f"arithmetic expands ${name} at run time, and a value like a[$(cmd)] runs cmd"
    if re.search(r"\$[1-9@*]", text):
        return "arithmetic expands a positional parameter at run time"
    return ""


def subscript_problem(index: str, ctx: Ctx) -> str:
    if index in ("@", "*") or re.fullmatch(r"-?\d+", index):
        return ""
    return arith_problem(index, ctx) or ""


def _cd(args: list[Word], ctx: Ctx) -> None:
    ops = [w for w in args if not w.text.startswith("-") or w.text == "-"]
    if not ops:
        ctx.cwd = HOME
        return
    if ops[0].text == "-":
        ctx.cwd = None
        return
    targets = resolve(ops[0], ctx)
    ctx.cwd = targets[0].path if len(targets) == 1 and not targets[0].unknown and not targets[0].glob else None


def _read(argv: list[str]) -> str:
    value_opts = {"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"}
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in value_opts:
            if a == "-a" and i + 1 < len(argv) and not NAME.fullmatch(argv[i + 1]):
                return "read -a into a computed name"
            if a == "-a" and i + 1 < len(argv) and assignment_problem(argv[i + 1]):
                return assignment_problem(argv[i + 1])
            i += 2
            continue
        if a.startswith("-") and set(a[1:]) <= set("rse"):
            i += 1
            continue
        if not NAME.fullmatch(a):
            return f"read into '{a}', which bash evaluates (a subscript can run code)"
        if assignment_problem(a):
            return assignment_problem(a)
        i += 1
    return ""


def _set(argv: list[str]) -> str:
    if len(argv) == 1:
        return "prints every shell variable, which may include secrets"
    args = argv[1:]
    for i, a in enumerate(args):
        if a == "--":
            return ""
        if a in SET_OPTS or (i and args[i - 1] in ("-o", "+o") and a in SET_OPTION_NAMES):
            continue
        if a in SET_OPTION_NAMES:
            continue
        return f"set {a} is not known to be harmless"
    return ""


def _test(argv: list[str]) -> str:
    for i, a in enumerate(argv[:-1]):
        if a in ("-v", "-R") and "[" in argv[i + 1]:
            return f"test {a} on a subscript evaluates it (it can run code)"
    return ""


ASKS = {"hash": "remembers or prints program locations (hash -p maps a name to any program)",
        "alias": "defines or prints aliases", "unalias": "changes aliases", "trap": "sets code to run later",
        "enable": "loads or changes builtins", "bind": "binds keys (bind -x runs commands)",
        "complete": "defines completions that can run commands", "compgen": "compgen -C runs commands",
        "mapfile": "mapfile -C runs a callback", "readarray": "readarray -C runs a callback",
        "fc": "fc runs commands from history", "getopts": "assigns variables", "shopt": "changes shell options",
        "caller": "prints the call stack", "disown": "changes jobs", "bg": "resumes jobs", "fg": "resumes jobs",
        "suspend": "stops the shell", "logout": "leaves the shell"}
PLAIN = {":", "exit", "return", "shift", "break", "continue", "times", "umask", "ulimit", "help", "echo", "type"}


def _set_positional(argv: list[str], words: list[Word], ctx: Ctx) -> None:
    """set -- words: "$@" is now these words."""
    rest = words[argv.index("--") + 1:]
    ctx.arrays.pop("@", None)
    if not any(w.dynamic for w in rest):
        ctx.arrays["@"] = tuple((resolve(w, ctx)[0].path or w.text) if w.tilde else w.text for w in rest)


def _problem(argv: list[str], ctx: Ctx) -> tuple[str, str] | None:
    """(why it asks, or "") and what it does when harmless, for builtins with options to look at."""
    name, args = argv[0], argv[1:]
    opts = [a for a in args if a.startswith("-")]
    checks = {
        "printf": (lambda: "printf -v assigns a variable (a subscript can run code)" if any(
            a.startswith("-v") for a in args[:1]) or "-v" in args else "", "prints text"),
        "test": (lambda: _test(argv), "a test"), "[": (lambda: _test(argv), "a test"),
        "read": (lambda: _read(argv), "reads a line into variables"),
        "set": (lambda: _set(argv), "sets shell options for this command"),
        "jobs": (lambda: "jobs -x runs a command" if any("x" in a for a in opts) else "", "lists jobs"),
        "history": (lambda: "" if not args or (len(args) == 1 and args[0].isdigit()) else
                    "history with options reads, writes or runs history", "lists history"),
        "wait": (lambda: "wait -p assigns a variable" if "-p" in args else "", "waits"),
        "let": (lambda: next((w for a in args if (w := arith_problem(a, ctx))), ""), "arithmetic on known values"),
    }
    if name not in checks:
        return None
    why, what = checks[name]
    return why(), what


def builtin(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict | None:
    """The verdict for a shell builtin, or None when argv[0] is not one handled here."""
    name, args = argv[0], argv[1:]
    if name in ("read", "mapfile", "readarray", "getopts", "printf", "wait"):  # the names it assigns are ours
        ctx.declared.update(a for a in args if NAME.fullmatch(a))
    if name in ("cd", "pushd"):
        _cd(words[1:], ctx)
        return safe(argv, "changes the working directory of this command")
    if name in ("popd", "dirs"):
        ctx.cwd = None if name == "popd" else ctx.cwd
        return safe(argv, "directory stack")
    if name in PLAIN or (name == "command" and args[:1] in (["-v"], ["-V"])):
        return safe(argv, "shell builtin")
    if name == "set" and "--" in args:
        _set_positional(argv, words, ctx)
    found = _problem(argv, ctx)
    if found is not None:
        why, what = found
        return confirm(argv, why) if why else safe(argv, what)
    if name == "trap" and len(args) >= 2 and not args[0].startswith("-"):  # the code runs later: judge it now
        return Verdict.combine([ctx.nested(args[0])[0], confirm(argv, ASKS[name])])
    return confirm(argv, ASKS[name]) if name in ASKS else None


def declaration(head: str, flags: list[str], names: list[str], ctx: Ctx) -> Verdict:
    """declare / typeset / local / export / readonly with their flags and the names they assign."""
    argv = [head, *flags, *names]
    if not names and not [f for f in flags if f not in ("-g",)]:
        return confirm(argv, "prints every variable, which may include secrets")
    for f in flags:
        bad = set(f.lstrip("-+")) - set("aArxglut")
        if bad:
            what = {"n": "makes a name reference (it can evaluate a subscript)", "i": "makes arithmetic assignments",
                    "p": "prints variables, which may include secrets", "f": "prints or changes functions",
                    "F": "prints functions"}.get(sorted(bad)[0], f"uses {f}")
            return confirm(argv, f"{head} {f} {what}")
    if not names:
        return confirm(argv, f"{head} {' '.join(flags)} prints variables, which may include secrets")
    for n in names:
        name = n.split("=", 1)[0]
        if not NAME.fullmatch(name.split("[", 1)[0]):
            return confirm(argv, f"{head} of '{n}': the name is computed at run time")
        why = assignment_problem(name.split("[", 1)[0])
        if why:
            return confirm(argv, why)
    return Verdict(Level.SAFE, (f'"{" ".join(argv)}": only changes this command\'s own variables',))
