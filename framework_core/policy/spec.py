"""Per-program specifications: what an invocation may contain to be positively known read-only.

A `Spec` lists a program's harmless options, the options that take a value (and what the value is), the
options known to write or execute (so an abbreviation that reaches them is recognised), and what its
operands are. Anything else asks. Long options are matched as the program parses them: exactly, or by a
unique prefix when the program accepts abbreviations (`git grep --open-files=CMD` is `--open-files-in-pager`).

Option syntax in the data: `-x` flag, `-x=` takes a value (next word or attached), `-x?` optional attached
value, `--name` flag, `--name=` takes a value (`--name=v` or `--name v`), `--name?` optional (`--name=v` only).
A suffix gives the value's kind (as Codex's execpolicy types its arguments): `:read` a file the program reads
(judged like a read), `:inside` a directory it runs in, and three kinds that make the option ask: `:write` a
file it writes (judged as a write target, so `sort -o ~/.bashrc` is Dangerous), `:exec` a program or command it
runs, `:net` a network address it talks to. A plain value is text (a count, a format, a name).

What options cannot say, two kinds of data say (`Need`, `Refuse`), and `prints` a form whose output is itself
the secret (a "read-only" program that prints logs, environments or command lines asks); a `check` function
only what those cannot
(ps's BSD letters, tar's modes, a sed or awk script). The entries live in `catalog/`, one per program.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

Role = Literal["ok", "read", "risk", "inside"]
Operands = Literal["files", "text", "none", "pattern", "names"]
#: The kinds of an option's value and the role each gives it; the asking kinds carry a default reason.
KINDS: dict[str, tuple[Role, str]] = {"read": ("read", ""), "inside": ("inside", ""),
                                      "write": ("risk", "writes a file"), "exec": ("risk", "runs a command"),
                                      "net": ("risk", "talks to the network")}


@dataclass(frozen=True)
class Opt:
    name: str
    arg: Literal["none", "value", "optional"] = "none"
    role: Role = "ok"
    why: str = ""
    writes: bool = False  # a risky option whose value is a file it writes (judged as a write target)


class SpecError(Exception):
    """A specification contradicts its own examples or is defined twice (a bug in the data, found when it loads)."""


@dataclass(frozen=True)
class Need:
    """Harmless only with one of `options` (any option at all when empty); `with_operands`: only when given
    operands (`git branch NAME` creates a branch, `git branch -l NAME` lists)."""

    options: frozenset[str]
    why: str
    with_operands: bool = False

    def problem(self, args: list[str], ops: list[str]) -> str:
        if self.with_operands and not ops:
            return ""
        given = bool(self.options & set(args)) if self.options else bool(args)
        return "" if given else self.why


@dataclass(frozen=True)
class Refuse:
    """Asks when a word matches `pattern` (a regular expression searched): any word, each operand, or the
    first operand only (`where` = "word", "operand", "first")."""

    where: Literal["word", "operand", "first"]
    pattern: str
    why: str

    def problem(self, args: list[str], ops: list[str]) -> str:
        words = args if self.where == "word" else ops[:1] if self.where == "first" else ops
        return self.why if any(re.search(self.pattern, w) for w in words) else ""


@dataclass
class Spec:
    program: str
    opts: dict[str, Opt] = field(default_factory=dict)
    operands: Operands = "files"
    max_operands: int | None = None
    abbrev: bool = True  # long options may be abbreviated (getopt_long, git parse-options)
    cluster: bool = True  # short options combine (-la)
    dashes_are_text: bool = False  # an unknown -word is an operand (seq -5 5, expr -1 + 2)
    recursive: frozenset[str] = frozenset()  # options that make it read whole directory trees
    always_recursive: bool = False
    # given names, it still looks inside (tree and du walk the tree below, file and unzip read contents): it looks
    # only where reading is known harmless. A plain `ls` shows one directory's names, realpath or stat none.
    looks_inside: bool = False
    values_next: bool = False  # each value option in a cluster takes the next word (tree -Lo 1 FILE), not the rest
    writes_last: bool = False  # an operand past max_operands is a file written (uniq IN OUT)
    subcommands: dict[str, "Spec"] = field(default_factory=dict)
    sub_required: bool = False  # a subcommand must follow the global options
    needs: Need | None = None
    refuse: tuple[Refuse, ...] = ()
    check: Callable[[list[str], list[str]], str | None] | None = None  # (args, operands) -> why not harmless
    revisions: bool = False  # operands are git revisions and pathspecs (`policy/git_objects.py` judges them)
    prints: str = ""  # what secret its output is, when it parses (journalctl, crontab -l, docker inspect): it asks
    ok: tuple[str, ...] = ()  # examples that must be harmless
    ask: tuple[str, ...] = ()  # examples that must not be

    def long_names(self) -> list[str]:
        return [n for n in self.opts if n.startswith("--")]


def parse_opts(text: str, role: Role = "ok", why: str = "") -> dict[str, Opt]:
    out: dict[str, Opt] = {}
    for tok in text.split():
        r: Role = role
        reason, writes = why, False
        tok, _, kind = tok.partition(":")
        if kind:
            if kind not in KINDS:
                raise SpecError(f"option {tok}: unknown kind :{kind} (one of {', '.join(KINDS)})")
            r, default = KINDS[kind]
            if role == "risk" and r != "risk":
                raise SpecError(f"option {tok}: a :{kind} value does not make an option ask; list it with the others")
            reason, writes = why or default, kind == "write"
        arg: Literal["none", "value", "optional"] = "none"
        if tok.endswith("="):
            tok, arg = tok[:-1], "value"
        elif tok.endswith("?"):
            tok, arg = tok[:-1], "optional"
        if kind and arg == "none":
            raise SpecError(f"option {tok}: a :{kind} kind needs a value (write {tok}= or {tok}?)")
        out[tok] = Opt(tok, arg, r, reason, writes)
    return out


def spec(program: str, ok_opts: str = "", risky: dict[str, str] | None = None, **kw: Any) -> Spec:
    """Build a Spec from the compact syntax: `ok_opts` the options (typed ones with `:write`, `:exec`, `:net`
    ask), `risky` maps option syntax to why it asks when no kind says it (`-C --clear`: changes the kernel log)."""
    opts = parse_opts(ok_opts + " --help --version")
    for syntax, why in (risky or {}).items():
        opts.update(parse_opts(syntax, "risk", why))
    return Spec(program, opts, **kw)


@dataclass
class Parsed:
    """An invocation split by a spec: where the operands are, which option values matter, or the problem."""

    problem: str = ""
    operands: list[int] = field(default_factory=list)  # indexes into the args
    values: list[tuple[Role, int, str]] = field(default_factory=list)  # (role, index of the word, value)
    seen: set[str] = field(default_factory=set)  # canonical option names used
    written: list[tuple[int, str]] = field(default_factory=list)  # (word index, file) a risky option writes
    sub: "Spec | None" = None
    sub_at: int = -1  # index of the subcommand word


def _long(s: Spec, args: list[str], i: int, out: Parsed) -> int:
    """Handle the --option at args[i]; returns how many following words it consumed, or -1 (out.problem set)."""
    word = args[i]
    name, eq, value = word.partition("=")
    opt = s.opts.get(name)
    if opt is None and s.abbrev:
        hits = [n for n in s.long_names() if n.startswith(name)]
        if len(hits) == 1:
            opt = s.opts[hits[0]]
        elif any(s.opts[h].role == "risk" for h in hits):
            out.problem = f"{name} may be read as {next(h for h in hits if s.opts[h].role == 'risk')}"
            return -1
    if opt is None:
        out.problem = f"option {name} is not known to be harmless"
        return -1
    out.seen.add(opt.name)
    if opt.role == "risk":
        out.problem = f"{word if opt.name == name else f'{name} (read as {opt.name})'} {opt.why}"
        if opt.writes and (eq or (opt.arg == "value" and i + 1 < len(args))):
            out.written.append((i, value) if eq else (i + 1, args[i + 1]))
        return -1
    if opt.arg == "none" and eq:
        out.problem = f"option {name} takes no value"
        return -1
    if opt.arg == "value" and not eq:
        if i + 1 >= len(args):
            return 0
        out.values.append((opt.role, i + 1, args[i + 1]))
        return 1
    if eq:
        out.values.append((opt.role, i, value))
    return 0


def _short(s: Spec, args: list[str], i: int, out: Parsed) -> int:
    word = args[i]
    if not s.cluster and len(word) > 2:  # a single-dash word option (java -version, xxd -cols)
        opt = s.opts.get(word)
        if opt is None or opt.role == "risk":
            out.problem = f"option {word} " + (opt.why if opt else "is not known to be harmless")
            return -1
        out.seen.add(word)
        if opt.arg == "value" and i + 1 < len(args):
            out.values.append((opt.role, i + 1, args[i + 1]))
            return 1
        return 0
    chars = word[1:]
    taken = 0
    for k, c in enumerate(chars):
        opt = s.opts.get("-" + c)
        if opt is None and c.isdigit() and "-N" in s.opts:  # head -5, git log -3
            continue
        if opt is None:
            out.problem = f"option -{c} is not known to be harmless"
            return -1
        out.seen.add(opt.name)
        if opt.role == "risk":
            out.problem = f"-{c} {opt.why}"
            if s.values_next and opt.writes and i + 1 + taken < len(args):
                out.written.append((i + 1 + taken, args[i + 1 + taken]))
            elif opt.writes and (chars[k + 1:] or i + 1 < len(args)):
                out.written.append((i, chars[k + 1:]) if chars[k + 1:] else (i + 1, args[i + 1]))
            return -1
        if s.values_next and opt.arg == "value":
            if i + 1 + taken < len(args):
                out.values.append((opt.role, i + 1 + taken, args[i + 1 + taken]))
            taken += 1
            continue
        if opt.arg in ("value", "optional"):
            if chars[k + 1:]:
                out.values.append((opt.role, i, chars[k + 1:]))
                return 0
            if opt.arg == "value" and i + 1 < len(args):
                out.values.append((opt.role, i + 1, args[i + 1]))
                return 1
            return 0
    return taken


def parse(s: Spec, args: list[str]) -> Parsed:
    """Split args by the spec (GNU order: options anywhere until `--`)."""
    out = Parsed()
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.operands += range(i + 1, len(args))
            break
        if s.subcommands and not out.operands and not a.startswith("-"):
            out.sub = s.subcommands.get(a)
            out.sub_at = i
            if out.sub is None:
                out.problem = f"{s.program} {a} is not known to be read-only"
            return out
        if a.startswith("--") and len(a) > 2:
            used = _long(s, args, i, out)
        elif a.startswith("-") and len(a) > 1 and not (s.dashes_are_text and a not in s.opts):
            used = _short(s, args, i, out)
        else:
            out.operands.append(i)
            used = 0
        if used < 0:
            return out
        i += 1 + used
    _finish(s, args, out)
    return out


def _finish(s: Spec, args: list[str], out: Parsed) -> None:
    if s.sub_required and out.sub is None and not (out.seen & {"--help", "--version", "-h", "-V", "-v"}):
        out.problem = f"{s.program} needs a subcommand to be known"
    elif s.max_operands is not None and len(out.operands) > s.max_operands:
        out.problem = f"{s.program} with {len(out.operands)} operands " + (
            "writes the last one" if s.writes_last else "is not known to be harmless")
        if s.writes_last:
            out.written.append((out.operands[-1], args[out.operands[-1]]))
    elif s.operands == "none" and out.operands:
        out.problem = f"{s.program} takes no operands here"
    elif s.needs is not None or s.refuse or s.check is not None:
        ops = [args[i] for i in out.operands]
        out.problem = next((why for rule in ((s.needs,) if s.needs else ()) + s.refuse
                            if (why := rule.problem(args, ops))), "")
        if not out.problem and s.check is not None:
            out.problem = s.check(args, ops) or ""
    if not out.problem and s.prints:
        out.problem = s.prints


def check_examples(specs: dict[str, Spec], judge: Callable[[list[str]], bool]) -> None:
    """Every `ok` example must be judged harmless and every `ask` example not; raise SpecError otherwise."""
    wrong: list[str] = []
    for name, s in specs.items():
        for ex in s.ok:
            if not judge(shlex.split(ex)):
                wrong.append(f"{name}: '{ex}' should be harmless but is not")
        for ex in s.ask:
            if judge(shlex.split(ex)):
                wrong.append(f"{name}: '{ex}' should ask but is judged harmless")
    if wrong:
        raise SpecError("program specifications contradict their examples:\n  " + "\n  ".join(wrong))
