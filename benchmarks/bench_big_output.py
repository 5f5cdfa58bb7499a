"""A command printing 200 MB (issue 6, target 7): peak RSS increase and time vs the same to /dev/null."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks.common import Row, absolute_row, interleaved, ratio_row

ROOT = Path(__file__).resolve().parent.parent
CMD = "yes 'a line of output that is fairly typical of a build log' | head -c 200000000"
CHILD = """
import json, os, resource, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from framework_core.tools.runner import run_command
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
out = run_command(sys.argv[2], cwd=Path(tempfile.gettempdir()), env=dict(os.environ), timeout_s=120,
                  budget_chars=30000, on_output=lambda s: None, spill_dir=Path(tempfile.mkdtemp()))
elapsed = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
os.unlink(out.full_output_path)
print(json.dumps({"s": elapsed, "rss_mb": (after - before) / 1024, "bytes": out.total_bytes}))
"""


def ours() -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), CMD], capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def measure(rounds: int = 3) -> list[Row]:
    stats: list[dict] = []

    def run_ours() -> float:
        stats.append(ours())
        return stats[-1]["s"]

    def run_base() -> float:
        import time

        start = time.perf_counter()
        subprocess.run(["bash", "-c", CMD + " > /dev/null"], check=True)
        return time.perf_counter() - start

    t_ours, t_base = interleaved(run_ours, run_base, rounds)
    rss = max(s["rss_mb"] for s in stats)
    return [ratio_row("200 MB command output: time", t_ours, t_base, 1.5, note="baseline = same command > /dev/null"),
            absolute_row("200 MB command output: peak RSS increase", rss, 50, "MB")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
