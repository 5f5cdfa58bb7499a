"""A command printing 200 MB: peak RSS increase and time vs the same to /dev/null.

Two reference rows show the floor any design pays on this machine: draining the output through a pipe with
no processing at all (`| cat > /dev/null`), and saving it to a file (`> file`), which LACA does so that the
model can read the whole output later, in ranges, with readFile.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from benchmarks.common import Row, absolute_row, ratio_row, reference_row

ROOT = Path(__file__).resolve().parent.parent
CMD = "yes 'a line of output that is fairly typical of a build log' | head -c 200000000"
CHILD = """
import json, os, resource, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from framework_core.tools.runner import run_command
from framework_core.tools.spill import OutputLimits, SessionBudget
spill = Path(tempfile.mkdtemp())
roomy = OutputLimits(spill, max_bytes=300_000_000, budget=SessionBudget(300_000_000))  # the default cap is 50 MB
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
out = run_command(sys.argv[2], cwd=Path(tempfile.gettempdir()), env=dict(os.environ), timeout_s=120,
                  budget_chars=30000, on_output=lambda s: None, spill_dir=spill, limits=roomy)
elapsed = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
os.unlink(out.full_output_path)
print(json.dumps({"s": elapsed, "rss_mb": (after - before) / 1024, "bytes": out.total_bytes}))
"""


def _shell(suffix: str) -> Callable[[], float]:
    def run() -> float:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            subprocess.run(["bash", "-c", CMD + suffix.format(tmp=tmp)], check=True)
            return time.perf_counter() - start
    return run


def measure(rounds: int = 5) -> list[Row]:
    stats: list[dict] = []

    def ours() -> float:
        res = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), CMD], capture_output=True, text=True, check=True)
        stats.append(json.loads(res.stdout))
        return stats[-1]["s"]

    runs: dict[str, Callable[[], float]] = {"ours": ours, "base": _shell(" > /dev/null"),
                                            "pipe": _shell(" | cat > /dev/null"), "file": _shell(" > {tmp}/out")}
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for i in range(rounds):  # rotate the order so machine noise hits every measurement alike
        for name in names[i % len(names):] + names[:i % len(names)]:
            times[name].append(runs[name]())
    t = {name: statistics.median(values) for name, values in times.items()}
    rss = max(s["rss_mb"] for s in stats)
    assert all(s["bytes"] == 200_000_000 for s in stats), "the runner lost output"
    return [ratio_row("200 MB command output: time", t["ours"], t["base"], 1.5,
                      note="baseline = same command > /dev/null"),
            reference_row("  floor: drain a pipe (| cat > /dev/null)", t["pipe"], t["base"],
                          note="the least any reader of the output costs"),
            reference_row("  floor: save to a file (> file)", t["file"], t["base"],
                          note="the least saving the full output costs"),
            reference_row("  ours vs saving to a file", t["ours"], t["file"]),
            absolute_row("200 MB command output: peak RSS increase", rss, 50, "MB")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
