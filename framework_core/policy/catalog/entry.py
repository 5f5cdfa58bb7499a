"""One program's entry: everything the policy holds about a program, under its name.

An entry is a bare `Spec` (`policy/spec.py`: the read-only invocations) or a `Program`, which adds what a spec
cannot say: the network (`Net`), other names, a verdict its name alone decides (`Fixed`: sudo, mkfs), the
judge in code for what data cannot say (`judge`: rm's targets, a shell's `-c` code), a wrapper's grammar
(`Grammar`: env, nice, timeout), and traits other parts of the policy read (`TRAITS`). A program with no
read-only invocation (curl, rm) is a `Program` with no spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from framework_core.policy.spec import Spec

#: What other parts of the policy ask about a program by name.
TRAITS = {
    "reads-trees": "reads whole directory trees (a secret anywhere below is carried out)",
    "lists-names": "its output can be file names (`find . | xargs cat` is judged with the names it lists)",
    "builds": "runs the project's own code (make, npm, pytest): in a just-cloned repository, downloaded code",
    "prints-env": "prints environment variables (secrets ride in its output)",
    "exact-grants": "a grant for it covers only the exact command: it destroys data or runs what its arguments say",
    "runs-as-another": "runs the command in its words with another user's rights (a deny rule sees that command)",
}


@dataclass(frozen=True)
class Net:
    """How a program uses the network: on every run, or for the listed subcommands only.

    `offline`: the program's own switches that keep it off the network (from its manual); `local`: for a
    subcommand, the words after it that stay local (`git remote -v`, `git submodule status`), a word with
    options after it only with those options (`show -n`: `git remote show -n origin`)."""

    subcommands: frozenset[str] = frozenset()
    offline: frozenset[str] = frozenset()
    local: dict[str, frozenset[str]] = field(default_factory=dict)


ALWAYS = Net()


def net(subcommands: str = "", offline: str = "", local: dict[str, tuple[str, ...]] | None = None) -> Net:
    """`net("install download", offline="--no-index")`: the network for those subcommands (all when none)."""
    return Net(frozenset(subcommands.split()), frozenset(offline.split()),
               {k: frozenset(v) for k, v in (local or {}).items()})


@dataclass(frozen=True)
class Fixed:
    """The program's name alone decides: asks or is Dangerous, whatever its arguments (`{name}` is filled in)."""

    level: Literal["ask", "dangerous"]
    why: str


@dataclass(frozen=True)
class Grammar:
    """A wrapper's options (env, nice, timeout …), from its manual: flags, short options without a value; values,
    short options taking one; long, name -> its short equivalent or a kind ("flag", "value", "optional" for
    `--x[=v]`); positional, words before the command; effects, option letter (or long name) -> what it does
    beyond running the command (it asks)."""

    flags: str = ""
    values: str = ""
    long: dict[str, str] = field(default_factory=dict)
    positional: int = 0
    effects: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Program:
    name: str
    spec: Spec | None = None
    net: Net | None = None
    aliases: tuple[str, ...] = ()
    judge: str = ""  # the judge in code for what its spec cannot say (simple.py's JUDGES names them)
    fixed: Fixed | None = None
    traits: frozenset[str] = frozenset()
    code: tuple[str, ...] = ()  # for a language: the options (or subcommands) whose value is code it runs
    wrapper: Grammar | None = None  # it runs the command that follows its options (`policy/wrappers.py`)
    exact_after: frozenset[str] = frozenset()  # first words after which a grant covers only the exact command


Entry = Spec | Program
EXACT = frozenset({"exact-grants"})


def as_program(entry: Entry) -> Program:
    return entry if isinstance(entry, Program) else Program(entry.program, entry)


def networked(names: str, how: Net = ALWAYS, **kw: object) -> list[Program]:
    """Programs that use the network and have no read-only invocation (`kw`: judge, traits)."""
    return [Program(n, None, how, **kw) for n in names.split()]  # type: ignore[arg-type]


def judged(names: str, judge: str, **kw: object) -> list[Program]:
    """Programs judged in code only (`judged("rm", "rm")`); `kw`: net, traits."""
    return [Program(n, None, judge=judge, **kw) for n in names.split()]  # type: ignore[arg-type]


def fixed(names: str, level: Literal["ask", "dangerous"], why: str, **kw: object) -> list[Program]:
    return [Program(n, fixed=Fixed(level, why), **kw) for n in names.split()]  # type: ignore[arg-type]


def traits(names: str, *which: str) -> list[Program]:
    """Programs the policy knows only by traits (`traits("pytest tox", "builds")`)."""
    return [Program(n, traits=frozenset(which)) for n in names.split()]
