"""Small helpers for the words LACA shows: counts read "1 line", "2 lines"."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`plural(1, "line")` is "1 line"; `plural(3, "line")` is "3 lines"; thousands get separators."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"
