"""Withhold credentials from the environment commands run in."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Mapping

NEVER_WITHHELD = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "PWD", "TMPDIR", "TZ"}


def scrub_env(env: Mapping[str, str], patterns: list[str], keep: list[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Return (clean env, sorted names withheld). Matching is case-insensitive."""
    pats = [p.upper() for p in patterns]
    keep_set = set(keep) | NEVER_WITHHELD
    clean: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in env.items():
        if name not in keep_set and any(fnmatchcase(name.upper(), p) for p in pats):
            withheld.append(name)
        else:
            clean[name] = value
    return clean, tuple(sorted(withheld))
