"""Time to prompt and idle memory, measured in a real pseudo-terminal.

Baseline: a bare `python -c` that imports prompt_toolkit and rich and draws a prompt.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row, interleaved, ratio_row

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ("import prompt_toolkit, rich.console\n"
            "from prompt_toolkit import PromptSession\n"
            "rich.console.Console().print('ready')\n"
            "PromptSession().prompt('base> ')\n")


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_DATA_HOME": f"{home}/.local/share",
                "OPENAI_API_KEY": "bench-key", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "TERM": "xterm",
                "PYTHONDONTWRITEBYTECODE": "1"})
    return env


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
    env = _env(home)
    ours_argv = [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp"]
    base_argv = [sys.executable, "-c", BASELINE]

    def ours() -> float:
        t, _ = _spawn_until(ours_argv, "forge>", env, ws)
        _close()
        return t

    def base() -> float:
        t, _ = _spawn_until(base_argv, "base>", env, ws)
        _close()
        return t

    ours_t, base_t = interleaved(ours, base, rounds)
    rows = [ratio_row("time to prompt", ours_t, base_t, 1.3)]
    _, pid = _spawn_until(ours_argv, "forge>", env, ws)
    time.sleep(2.0)  # let background warm-up finish: memory at idle, before the first message
    rows.append(absolute_row("memory at idle (RSS)", rss_mb(pid), 80, "MB"))
    _close()
    return rows


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
