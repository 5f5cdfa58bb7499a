"""1,000 small edits in the overlay: a command that appends a line to each of 1,000 existing small files, run
through LACA's own `Sandbox.launch` (the overlay's upper layer in a folder on the workspace's file system, as
LACA puts it), against the same loop run directly on a copy of the workspace. Each file the command opens for
writing is copied up by overlayfs; mounted `volatile` (where the probe finds it works) the copy-up is not synced
file by file. The row without `volatile` is the same launch with the probe's finding switched off.

Only the command is timed (launch included); reading and landing the change set is `bench_overlay`'s."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, ratio_row, reference_row

FILES = 1000
LOOP = "for f in f*; do echo more >> \"$f\"; done"


def _workspace(root: Path, name: str) -> Path:
    ws = root / name
    ws.mkdir()
    for i in range(FILES):
        (ws / f"f{i:04d}").write_text("line\n")
    return ws


def _direct(root: Path, n: int) -> float:
    ws = _workspace(root, f"direct-{n}")
    start = time.perf_counter()
    subprocess.run(["bash", "-c", LOOP], cwd=ws, check=True)
    return time.perf_counter() - start


def _sandboxed(root: Path, n: int, volatile: bool) -> float:
    from framework_core.sandbox.home import HomeAllow
    from framework_core.sandbox.sandbox import Sandbox

    ws = _workspace(root, f"ws-{n}")
    (root / "home").mkdir(exist_ok=True)
    (root / "ov").mkdir(exist_ok=True)
    sandbox = Sandbox("workspace-write", ws, home=root / "home", home_allow=HomeAllow(), cache_root=root / "cache",
                      overlay_dirs=(root / "ov",))
    if not volatile:
        sandbox.report.volatile = None
    try:
        start = time.perf_counter()
        with sandbox.launch(cwd=ws, writes=True, network=False) as launch:
            subprocess.run([*launch.argv, "bash", "-c", LOOP], pass_fds=launch.pass_fds, check=True)
        took = time.perf_counter() - start
        assert launch.upper is not None and len(list(launch.upper.iterdir())) == FILES
        shutil.rmtree(launch.upper)
        sandbox.discard(launch)
        return took
    finally:
        sandbox.close()


def measure(rounds: int = 5) -> list[Row]:
    from framework_core.sandbox.probe import probe

    report = probe()
    if not report.overlay:
        return []
    root = Path(tempfile.mkdtemp(prefix="bench-copyup-", dir=Path.home()))  # not /tmp: the usual disk
    try:
        direct, vol, synced = [], [], []
        for n in range(rounds):  # interleaved, so that the machine's load falls on all three alike
            direct.append(_direct(root, n))
            if report.volatile is not None:
                vol.append(_sandboxed(root, n, True))
            synced.append(_sandboxed(root, 100 + n, False))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = statistics.median(direct)
    rows = []
    if vol:
        rows.append(ratio_row(f"{FILES:,} small edits in the overlay (volatile)", statistics.median(vol), base, 3.0,
                              note="LACA's Sandbox.launch, overlay mounted volatile; baseline: the loop run directly"))
    rows.append(reference_row(f"{FILES:,} small edits, overlay synced per file", statistics.median(synced), base,
                              note="bubblewrap's own --overlay (no mount options): each copy-up is synced"))
    return rows


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
