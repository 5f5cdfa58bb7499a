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


@dataclass(frozen=True)
class Verdict:
    """A classification with the human-readable reasons behind it (which segment, which rule).

    `network` says whether any part of the command uses the network; the sandbox gives a command the
    network only when this is set and the user (or a rule) approved it, so a Safe verdict never has it.
    """

    level: Level
    reasons: tuple[str, ...] = field(default_factory=tuple)
    network: bool = False

    @staticmethod
    def combine(verdicts: "list[Verdict]") -> "Verdict":
        """Strictest wins; reasons are ordered riskiest first and none is dropped; network if any part uses it."""
        if not verdicts:
            return Verdict(Level.NEEDS_CONFIRM, ("empty command",))
        top = max(v.level for v in verdicts)
        network = any(v.network for v in verdicts)
        ordered = sorted(verdicts, key=lambda v: -int(v.level))
        reasons = [r for v in ordered if v.level > Level.SAFE or top == Level.SAFE for r in v.reasons]
        if network and top == Level.SAFE:  # nothing that uses the network is Safe; keep the invariant explicit
            return Verdict(Level.NEEDS_CONFIRM, ("uses the network",), True)
        return Verdict(top, tuple(dict.fromkeys(reasons)), network)
