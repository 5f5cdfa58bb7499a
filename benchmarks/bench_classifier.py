"""Classifier time per command over the policy corpus (issue 3 and issue 6, target 6)."""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.common import Row, absolute_row

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "unit" / "policy" / "corpus.txt"


def measure() -> list[Row]:
    from framework_core.policy.classifier import _classify, classify_command

    cmds = [l.split("\t", 1)[1].replace("⏎", "\n") for l in CORPUS.read_text().splitlines()
            if l.strip() and not l.startswith("#")]
    classify_command("ls")  # load the parser
    times = []
    for _ in range(5):
        for cmd in cmds:
            start = time.perf_counter()
            _classify(cmd, 0)  # uncached
            times.append(time.perf_counter() - start)
    times.sort()
    p50, p99 = times[len(times) // 2] * 1000, times[int(len(times) * 0.99)] * 1000
    return [absolute_row(f"classifier p99 ({len(cmds)} cmds, p50 {p50:.3f} ms)", p99, 2, "ms")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
