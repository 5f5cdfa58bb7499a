"""The ordered risk levels and the verdict type shared by the whole policy package (pure, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Level(IntEnum):
    """Ordered: the strictest level of any segment wins."""

    SAFE = 0
    NEEDS_CONFIRM = 1
    DANGEROUS = 2

    @property
    def label(self) -> str:
        return {0: "safe", 1: "needs_confirm", 2: "dangerous"}[int(self)]

    @classmethod
    def from_label(cls, label: str) -> "Level":
        return {"safe": cls.SAFE, "needs_confirm": cls.NEEDS_CONFIRM, "dangerous": cls.DANGEROUS}[label]


@dataclass(frozen=True)
class Verdict:
    """A classification with the human-readable reasons behind it (which segment, which rule)."""

    level: Level
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @staticmethod
    def combine(verdicts: "list[Verdict]") -> "Verdict":
        """Strictest wins; reasons of the winning level come first, the others are kept after."""
        if not verdicts:
            return Verdict(Level.NEEDS_CONFIRM, ("empty command",))
        top = max(v.level for v in verdicts)
        first = [r for v in verdicts if v.level == top for r in v.reasons]
        return Verdict(top, tuple(dict.fromkeys(first)))
