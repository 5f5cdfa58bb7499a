"""The program catalog: one entry per program, the only place the policy's data about a program lives.

Modules by family (`files`, `git`, `dev`, `scripts`, `versions`, `runners`, `changes`, `network`, `shell`)
each export `PROGRAMS`, a list of entries (`catalog/entry.py`). `programs()` loads them once and refuses a
program (or an alias) defined twice, an unknown judge or trait; `known.registry()` builds the read-only
specifications from it and checks every entry's examples; `simple.program` looks the program up once and
follows its entry (fixed verdict, spec, judge, network, traits). How to add a program: docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from framework_core.policy.catalog.entry import TRAITS, Entry, Net, Program, as_program
from framework_core.policy.spec import Spec, SpecError

#: The judges in code an entry may name, and where each is.
JUDGES = {**{j: "programs.py" for j in ("rm", "rmdir", "unlink", "copy", "touch", "mkdir", "truncate", "mkfifo", "tee",
                                        "dd", "shred", "chmod", "chown", "crontab", "systemctl", "scheduler", "kill",
                                        "find", "container")},
          **{j: "interp.py" for j in ("shell", "plain-shell", "language", "eval", "source", "make", "watch", "xargs")},
          "git": "git.py", "sed": "script_programs.py", "awk": "script_programs.py", "runs-input": "simple.py"}
FAMILIES = ("files", "git", "dev", "scripts", "versions", "runners", "changes", "network", "wrappers", "shell")


@lru_cache(maxsize=1)
def programs() -> dict[str, Program]:
    """Every program and alias by name, from the family modules."""
    import importlib

    return index((family, importlib.import_module(f"{__name__}.{family}").PROGRAMS) for family in FAMILIES)


def index(families: Iterable[tuple[str, list[Entry]]]) -> dict[str, Program]:
    """Entries by name (aliases included); a name defined twice, an unknown judge or trait is a SpecError
    naming the catalog file."""
    out: dict[str, Program] = {}
    where: dict[str, str] = {}
    for family, entries in families:
        for item in entries:
            program = as_program(item)
            _validate(program, family)
            for name in (program.name, *program.aliases):
                if name in out:
                    raise SpecError(f"program {name} is defined twice: in catalog/{where[name]}.py and "
                                    f"catalog/{family}.py (keep one entry)")
                out[name], where[name] = program, family
    return out


def specs() -> dict[str, Spec]:
    """The read-only specifications by program name (aliases share their program's)."""
    return {name: p.spec for name, p in programs().items() if p.spec is not None}


@lru_cache(maxsize=1)
def networks() -> dict[str, Net]:
    """How each program that uses the network uses it, by name (aliases included)."""
    return {name: p.net for name, p in programs().items() if p.net is not None}


def _validate(p: Program, family: str) -> None:
    if p.judge and p.judge not in JUDGES:
        raise SpecError(f"catalog/{family}.py: {p.name} names the judge {p.judge!r}, which is not one of "
                        f"{', '.join(sorted(JUDGES))}")
    unknown = p.traits - set(TRAITS)
    if unknown:
        raise SpecError(f"catalog/{family}.py: {p.name} has the unknown trait {sorted(unknown)[0]!r} (one of "
                        f"{', '.join(TRAITS)})")


def entry(name: str) -> Program | None:
    return programs().get(name)


def judge_of(name: str) -> str:
    p = programs().get(name)
    return p.judge if p is not None else ""


def has_trait(name: str, trait: str) -> bool:
    p = programs().get(name)
    return p is not None and trait in p.traits
