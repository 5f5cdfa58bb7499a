"""A fresh clone's first `make run` against a plain `python -m venv .venv && pip install -e .` of the same tree,
measured in the same run (`python -m benchmarks.bench_install`; not part of `make bench`: it installs twice and
needs the package registries). Caches are as the machine has them; the row says so."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, format_table, ratio_row

ROOT = Path(__file__).resolve().parent.parent
BOUND = 0.6


def _clone(into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(into)], check=True)
    return into


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return took


def measure() -> list[Row]:
    base = Path(tempfile.mkdtemp(prefix="laca-install-bench-", dir=str(ROOT.parent)))
    try:
        ours = _time(["make", "run", "ARGS=--version"], _clone(base / "make"))
        plain_dir = _clone(base / "plain")
        plain = _time(["sh", "-c", f"{sys.executable} -m venv .venv && .venv/bin/pip install -q -e ."], plain_dir)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return [ratio_row("fresh clone: make run (uv, locked)", ours, plain, BOUND,
                      note="baseline = python -m venv && pip install -e . of the same tree, the same caches")]


if __name__ == "__main__":
    print(format_table(measure()))
