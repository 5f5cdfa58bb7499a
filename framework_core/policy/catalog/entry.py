"""One program's entry: its read-only specification and its use of the network, under one name.

Most entries are a bare `Spec` (see `policy/spec.py`); a `Program` wraps one when the program also uses the
network (always, or for some subcommands) or answers to other names. A program with no read-only invocation
(curl) is a `Program` with no spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from framework_core.policy.spec import Spec


@dataclass(frozen=True)
class Net:
    """How a program uses the network: on every run, or for the listed subcommands only.

    `offline`: the program's own switches that keep it off the network (from its manual); `local`: for a
    subcommand, the words after it that stay local (`git remote -v`, `git submodule status`)."""

    subcommands: frozenset[str] = frozenset()
    offline: frozenset[str] = frozenset()
    local: dict[str, frozenset[str]] = field(default_factory=dict)


ALWAYS = Net()


def net(subcommands: str = "", offline: str = "", local: dict[str, tuple[str, ...]] | None = None) -> Net:
    """`net("install download", offline="--no-index")`: the network for those subcommands (all when none)."""
    return Net(frozenset(subcommands.split()), frozenset(offline.split()),
               {k: frozenset(v) for k, v in (local or {}).items()})


@dataclass(frozen=True)
class Program:
    name: str
    spec: Spec | None = None
    net: Net | None = None
    aliases: tuple[str, ...] = ()


Entry = Spec | Program


def as_program(entry: Entry) -> Program:
    return entry if isinstance(entry, Program) else Program(entry.program, entry)


def networked(names: str, how: Net = ALWAYS) -> list[Program]:
    """Programs whose only fact here is their use of the network (nothing they do is known read-only)."""
    return [Program(n, None, how) for n in names.split()]
