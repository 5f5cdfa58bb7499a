"""What each turn of a session cost: tokens in and out, cache reads and writes, requests, and the price.

The session keeps a `Ledger`: a turn starts with each user message, and every request's usage (compaction's
summaries included) counts in the turn it happened in. It is rebuilt from the transcript on resume, so
`/tokens`, the status line and `-p --output-format json` tell the same story.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from framework_core.lial_core import Usage

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Prices

LABEL_CHARS = 24
SHOWN_TURNS = 10


@dataclass
class TurnTokens:
    label: str  # the start of the user's message
    usage: Usage = field(default_factory=Usage)
    requests: int = 0


@dataclass
class Ledger:
    turns: list[TurnTokens] = field(default_factory=list)

    def start_turn(self, text: str) -> None:
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith("[LACA: ")]
        label = " ".join((lines[0] if lines else text).split())
        self.turns.append(TurnTokens(label[:LABEL_CHARS] + ("…" if len(label) > LABEL_CHARS else "")))

    def add(self, usage: Usage) -> None:
        if not self.turns:  # a request before any turn (a /compact of a resumed session)
            self.turns.append(TurnTokens("(before the first turn)"))
        turn = self.turns[-1]
        turn.usage = turn.usage + usage
        turn.requests += 1

    @property
    def requests(self) -> int:
        return sum(t.requests for t in self.turns)

    def last(self) -> tuple[Usage, int] | None:
        """The last turn's tokens and requests, or None before the first."""
        return (self.turns[-1].usage, self.turns[-1].requests) if self.turns else None


def all_tokens(usage: Usage) -> int:
    """Every token the requests processed: input at full rate, cache reads and writes, and output."""
    return usage.context_tokens + usage.output_tokens


def usage_dict(usage: Usage, prices: "Prices", requests: int | None = None) -> dict[str, Any]:
    """The figures as `-p --output-format json` reports them (cost None where prices are unknown)."""
    cost = prices.cost(usage)
    out: dict[str, Any] = {**asdict(usage), "total_tokens": all_tokens(usage)}
    if requests is not None:
        out["requests"] = requests
    out["cost_usd"] = round(cost, 6) if cost is not None else None
    return out


def turns_table(ledger: Ledger, total: Usage, prices: "Prices") -> list[str]:
    """Per turn and in total: requests, input, cache reads and writes, output, cost (where prices are known)."""
    priced = prices.known
    head = f"{'turn':<{LABEL_CHARS + 4}} {'req':>3} {'input':>8} {'cache rd':>8} {'cache wr':>8} {'output':>7}"
    lines = [head + ("    cost" if priced else "")]

    def row(name: str, usage: Usage, requests: int) -> str:
        line = (f"{name:<{LABEL_CHARS + 4}} {requests:>3} {usage.input_tokens:>8,} {usage.cache_read_tokens:>8,} "
                f"{usage.cache_write_tokens:>8,} {usage.output_tokens:>7,}")
        cost = prices.cost(usage)
        return line + (f" {f'${cost:.4f}':>7}" if priced and cost is not None else "")

    hidden = max(len(ledger.turns) - SHOWN_TURNS, 0)
    if hidden:
        lines.append(f"({hidden} earlier turn{'s' if hidden > 1 else ''} not shown)")
    for n, turn in enumerate(ledger.turns[hidden:], start=hidden + 1):
        lines.append(row(f"{n}. {turn.label}", turn.usage, turn.requests))
    lines.append(row("total", total, ledger.requests))
    return lines


def status_total(usage: Usage, prices: "Prices") -> str:
    """The running total for the status line: '12.3k tok · $0.0123' (no cost where prices are unknown)."""
    n = all_tokens(usage)
    tokens = f"{n:,} tok" if n < 10_000 else f"{n / 1000:,.1f}k tok"
    cost = prices.cost(usage)
    return tokens + (f" · ${cost:.4f}" if cost is not None else "")
