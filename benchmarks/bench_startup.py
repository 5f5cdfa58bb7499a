"""Time to prompt and idle memory, measured in a real pseudo-terminal.

Baseline: a bare `python -c` that imports prompt_toolkit and rich and draws a prompt.

Bytecode: both run with their compiled bytecode cached, as an installed `laca` has it (pip compiles it at
install), in a cache folder of the benchmark's own (`PYTHONPYCACHEPREFIX`), warmed by one untimed run; the source
tree is left as it was, and the figure does not depend on whether it holds `__pycache__` folders or the
environment sets PYTHONDONTWRITEBYTECODE. A reference row gives LACA with its own modules compiled at every
start (the libraries' bytecode still cached), as a source tree under PYTHONDONTWRITEBYTECODE runs.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from benchmarks.common import Row, absolute_row, ratio_row, reference_row

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ("import prompt_toolkit, rich.console\n"
            "from prompt_toolkit import PromptSession\n"
            "rich.console.Console().print('ready')\n"
            "PromptSession().prompt('base> ')\n")


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_DATA_HOME": f"{home}/.local/share",
                "OPENAI_API_KEY": "bench-key", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "TERM": "xterm"})
    return env


def bytecode_envs(env: dict[str, str], warm: Callable[[dict[str, str]], None]) -> tuple[dict[str, str], dict[str, str]]:
    """(cached, laca compiled): `env` with every module's bytecode in a cache folder of the benchmark's own, filled
    by `warm(cached_env)` (one untimed run of each command); and the same with LACA's own modules left out of
    the cache and not written to it, so that they are compiled at every start."""
    cache = tempfile.mkdtemp(prefix="laca-bench-pyc-")
    cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = cache
    warm(cached)
    libraries = tempfile.mkdtemp(prefix="laca-bench-pyc-libs-")
    shutil.copytree(cache, libraries, dirs_exist_ok=True)
    shutil.rmtree(libraries + str(ROOT / "framework_core"), ignore_errors=True)  # it mirrors each source's path
    return cached, {**cached, "PYTHONPYCACHEPREFIX": libraries, "PYTHONDONTWRITEBYTECODE": "1"}


def interleaved3(ours: Callable[[], float], compiled: Callable[[], float], baseline: Callable[[], float],
                 rounds: int) -> tuple[float, float, float]:
    """The three measurements in turn, each round in a rotated order; their medians."""
    runs: list[list[float]] = [[], [], []]
    fns = (ours, compiled, baseline)
    for i in range(rounds):
        for k in range(3):
            j = (i + k) % 3
            runs[j].append(fns[j]())
    a, b, c = (statistics.median(r) for r in runs)
    return a, b, c


def _spawn_until(argv: list[str], marker: str, env: dict[str, str], cwd: str) -> tuple[float, int]:
    """Seconds until `marker` shows in the pty, and the child's pid (still running)."""
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=cwd, dimensions=(40, 120), encoding="utf-8", timeout=30)
    child.expect_exact(marker)
    elapsed = time.perf_counter() - start
    _spawn_until.last_child = child  # type: ignore[attr-defined]
    return elapsed, child.pid


def _close() -> None:
    child = getattr(_spawn_until, "last_child", None)
    if child is not None:
        child.terminate(force=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(rounds: int = 7) -> list[Row]:
    home = tempfile.mkdtemp(prefix="laca-bench-")
    ws = tempfile.mkdtemp(prefix="laca-ws-")
    ours_argv = [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp"]
    base_argv = [sys.executable, "-c", BASELINE]

    def timed_prompt(argv: list[str], marker: str, env: dict[str, str]) -> float:
        t, _ = _spawn_until(argv, marker, env, ws)
        _close()
        return t

    def warm(env: dict[str, str]) -> None:
        timed_prompt(ours_argv, "forge>", env)
        timed_prompt(base_argv, "base>", env)

    cached, compiled = bytecode_envs(_env(home), warm)
    ours_t, compiled_t, base_t = interleaved3(lambda: timed_prompt(ours_argv, "forge>", cached),
                                              lambda: timed_prompt(ours_argv, "forge>", compiled),
                                              lambda: timed_prompt(base_argv, "base>", cached), rounds)
    rows = [ratio_row("time to prompt", ours_t, base_t, 1.3),
            reference_row("  the same, LACA's modules compiled at each start", compiled_t, base_t)]
    _, pid = _spawn_until(ours_argv, "forge>", cached, ws)
    time.sleep(2.0)  # let background warm-up finish: memory at idle, before the first message
    rows.append(absolute_row("memory at idle (RSS)", rss_mb(pid), 80, "MB"))
    _close()
    return rows


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
