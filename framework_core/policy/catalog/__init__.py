"""The program catalog: one entry per program, the only place the policy's data about a program lives.

Modules by family (`files`, `git`, `dev`, `scripts`, `versions`, `network`) each export `PROGRAMS`, a list of
entries (`catalog/entry.py`). `programs()` loads them once and refuses a program (or an alias) defined twice;
`known.registry()` builds the read-only specifications from it and checks every entry's examples, and
`network.uses_network` reads the network facts from it. How to add a program: docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from functools import lru_cache

from framework_core.policy.catalog.entry import Net, Program, as_program
from framework_core.policy.spec import Spec, SpecError

FAMILIES = ("files", "git", "dev", "scripts", "versions", "network")


@lru_cache(maxsize=1)
def programs() -> dict[str, Program]:
    """Every program and alias by name; a name defined twice is a SpecError naming both places."""
    import importlib

    out: dict[str, Program] = {}
    where: dict[str, str] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        for entry in module.PROGRAMS:
            program = as_program(entry)
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
