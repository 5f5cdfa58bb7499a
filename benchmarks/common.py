"""Shared pieces of the benchmark suite: a result row, timing helpers, interleaved measurement."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable


@dataclass
class Row:
    measure: str
    ours: float
    baseline: float | None
    unit: str
    target: str  # human-readable target, e.g. "≤ 1.3× baseline"
    met: bool | None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.ours / self.baseline if self.baseline else None


def require_loopback(url: str) -> None:
    """A benchmark talks to our fake servers only: refuse to run against any other address."""
    from urllib.parse import urlparse

    host = urlparse(url).hostname or ""
    if not (host == "localhost" or host.startswith("127.") or host == "::1"):
        raise SystemExit(f"refusing to benchmark against {url}: only the fake servers on loopback are measured")


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(ours: Callable[[], float], baseline: Callable[[], float], rounds: int) -> tuple[float, float]:
    """Alternate the two measurements so machine noise hits both alike; return the medians."""
    a: list[float] = []
    b: list[float] = []
    for i in range(rounds):
        if i % 2:
            a.append(ours())
            b.append(baseline())
        else:
            b.append(baseline())
            a.append(ours())
    return statistics.median(a), statistics.median(b)


def ratio_row(measure: str, ours: float, baseline: float, limit: float, unit: str = "s", note: str = "") -> Row:
    return Row(measure, ours, baseline, unit, f"≤ {limit}× baseline", ours <= limit * baseline, note)


def reference_row(measure: str, ours: float, baseline: float, unit: str = "s", note: str = "") -> Row:
    """A figure that explains another row (a floor or a cost breakdown); it has no target of its own."""
    return Row(measure, ours, baseline, unit, "(reference)", None, note)


def absolute_row(measure: str, ours: float, limit: float, unit: str, note: str = "") -> Row:
    return Row(measure, ours, None, unit, f"≤ {limit} {unit}", ours <= limit, note)


def format_table(rows: list[Row]) -> str:
    head = f"{'measure':<44} {'ours':>12} {'baseline':>12} {'ratio':>7}  {'target':<20} met"
    lines = [head, "-" * len(head)]
    for r in rows:
        base = f"{r.baseline:.4g} {r.unit}" if r.baseline is not None else "-"
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        met = {True: "yes", False: "NO", None: "-"}[r.met]
        lines.append(f"{r.measure:<44} {r.ours:>9.4g} {r.unit:<2} {base:>12} {ratio:>7}  {r.target:<20} {met}")
        if r.note:
            lines.append(f"    {r.note}")
    return "\n".join(lines)
