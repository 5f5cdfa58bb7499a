"""Verdict helpers shared by the per-program modules."""

from __future__ import annotations

import shlex
from typing import Callable

from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import credential_reason

Recurse = Callable[[str], Verdict]


def seg(argv: list[str]) -> str:
    text = shlex.join(argv)
    return text if len(text) <= 70 else text[:67] + "…"


def safe(argv: list[str], why: str = "read-only") -> Verdict:
    return Verdict(Level.SAFE, (f'"{seg(argv)}": {why}',))


def confirm(argv: list[str], why: str) -> Verdict:
    return Verdict(Level.NEEDS_CONFIRM, (f'"{seg(argv)}": {why}',))


def danger(argv: list[str], why: str) -> Verdict:
    return Verdict(Level.DANGEROUS, (f'"{seg(argv)}": {why}',))


def read_only_args(argv: list[str]) -> Verdict:
    for arg in argv[1:]:
        why = credential_reason(arg)
        if why:
            return confirm(argv, f"reads a credential file ({why})")
    return safe(argv)
