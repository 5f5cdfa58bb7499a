"""Classifier time per command over the policy corpora (target: p99 ≤ 2 ms).

Each command is classified uncached 5 times and its median kept, then the p99 is taken over commands: on a
shared machine a single run can be preempted for milliseconds, which says nothing about the classifier.
The worst single run is printed too, so a real outlier still shows.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row

POLICY_TESTS = Path(__file__).resolve().parent.parent / "tests" / "unit" / "policy"
RUNS = 5


def corpus() -> list[str]:
    files = [POLICY_TESTS / "corpus.txt", *sorted((POLICY_TESTS / "corpus").glob("*.txt"))]
    return [line.split("\t", 1)[1].replace("⏎", "\n") for f in files for line in f.read_text("utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def measure() -> list[Row]:
    from framework_core.policy.classifier import _classify, classify_command

    cmds = corpus()
    classify_command("ls")  # load the parser and the specifications
    medians, worst = [], 0.0
    for cmd in cmds:
        runs = []
        for _ in range(RUNS):
            start = time.perf_counter()
            _classify(cmd, 0)  # uncached
            runs.append(time.perf_counter() - start)
        medians.append(statistics.median(runs))
        worst = max(worst, max(runs))
    medians.sort()
    p50, p99 = medians[len(medians) // 2] * 1000, medians[int(len(medians) * 0.99)] * 1000
    label = f"classifier p99 ({len(cmds)} cmds, p50 {p50:.3f} ms, worst single run {worst * 1000:.1f} ms)"
    return [absolute_row(label, p99, 2, "ms")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
