"""Run every benchmark against the local fake servers and print one table.

    make bench                      # or: .venv/bin/python -m benchmarks.run_all [--write]
--write records the run in benchmarks/RESULTS.md with the machine details, followed by the analysis kept in
benchmarks/NOTES.md.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

from benchmarks.common import Row, format_table

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["bench_startup", "bench_oneshot", "bench_first_answer", "bench_render", "bench_turn", "bench_session_cost",
           "bench_context", "bench_classifier", "bench_big_output", "bench_sandbox", "bench_overlay", "bench_copyup",
           "bench_cache", "bench_resume", "bench_task_bytes", "bench_edit_bytes"]


def _notes() -> str:
    """The hand-written analysis (benchmarks/NOTES.md), so that re-recording a run keeps it."""
    path = ROOT / "benchmarks" / "NOTES.md"
    if not path.exists():
        return ""
    text = path.read_text()
    if text.startswith("<!--"):
        text = text.split("-->", 1)[1]
    return "\n" + text.strip() + "\n"


def _sections(results: Path) -> str:
    """The sections recorded by single benchmarks after the notes (each dated): kept when the table is rewritten."""
    if not results.exists():
        return ""
    text = results.read_text()
    notes_titles = {line for line in _notes().splitlines() if line.startswith("## ")}
    parts = text.split("\n## ")[1:]
    kept = [p for p in parts if "## " + p.splitlines()[0] not in notes_titles]
    return "".join("\n## " + p.rstrip("\n") + "\n" for p in kept)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    import importlib

    rows: list[Row] = []
    for name in MODULES:
        print(f"running {name} …", file=sys.stderr, flush=True)
        try:
            rows += importlib.import_module(f"benchmarks.{name}").measure()
        except Exception as exc:  # one broken benchmark must not hide the others
            rows.append(Row(name, float("nan"), None, "", "-", None, note=f"failed: {type(exc).__name__}: {exc}"))
    table = format_table(rows)
    print(table)
    if "--write" in sys.argv:
        machine = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
        results = ROOT / "benchmarks" / "RESULTS.md"
        head = (f"# Benchmark results\n\nRecorded {time.strftime('%Y-%m-%d %H:%M %Z')} on {machine}.\n"
                f"Command: `make bench` (ratios are medians of interleaved runs, so machine noise hits both "
                f"sides).\n\n```\n{table}\n```\n")
        results.write_text(head + _notes() + _sections(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
