"""The model names an SDK lists as a `Literal` type alias (possibly nested in unions)."""

from __future__ import annotations

import typing


def literal_strings(alias: object) -> frozenset[str]:
    names: set[str] = set()
    pending = list(typing.get_args(alias))
    while pending:
        arg = pending.pop()
        if isinstance(arg, str):
            names.add(arg)
        else:
            pending += typing.get_args(arg)
    return frozenset(names)
