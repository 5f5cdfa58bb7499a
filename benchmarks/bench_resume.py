"""Durability costs: resuming a long session, and memory over many turns.

- `--continue` on a 10,000-message transcript (target ≤ 1 s): lock, read and rebuild the history, write
  back what loading repaired. Measured in process (the resume itself) and, for reference, as the whole
  `laca --continue -p` command against the fake server minus a fresh `laca -p`.
- RSS over 1,000 turns (target: steady, ≤ 20 MB of growth from turn 100 to turn 1,000): an agent with its
  transcript, talking to an in-process fake server; the history is cleared every 50 turns (each request
  carries all of it, so a 2,000-message history would make the run quadratic), so what grows is what a
  turn leaves behind.

    .venv/bin/python -m benchmarks.bench_resume [--append]     # --append adds the figures to RESULTS.md
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row, reference_row

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = 10_000


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def write_long_session(data: Path, workspace: Path, messages: int = MESSAGES) -> Path:
    """A transcript shaped like real use: turns of a question, a tool call, its result and an answer, with
    the usage, decision and tool_started records a session writes, and an unanswered call at the end (a kill)
    so that loading has a repair to write back."""
    from framework_core.lial_core import Message, ToolRequest, ToolResult, Usage
    from framework_core.core.session import open_session

    s = open_session(data)
    s.start({"workspace": str(workspace), "provider": "openai", "persona": "forge"})
    turn = 0
    while len(s.messages) < messages - 2:
        rid = f"call_{turn}"
        s.add_user(f"question {turn}: please look at file_{turn}.py and explain it " * 2)
        call = ToolRequest(rid, "readFile", {"path": f"f{turn}.py"})
        s.add(Message("assistant", "Let me read it.", tool_calls=[call]))
        s.record({"type": "tool_started", "request_id": rid, "tool_name": "readFile"})
        s.add_result(ToolResult(rid, "readFile", "success", {"content": "def f():\n    return 1\n" * 40}))
        s.record({"type": "tool_decision", "request_id": rid, "status": "success", "policy": "allow"})
        s.add(Message("assistant", f"File {turn} defines one function returning 1. " * 8))
        s.record_usage(Usage(1200, 150))
        turn += 1
    s.add_user("one more")
    s.add(Message("assistant", "", tool_calls=[ToolRequest("cut", "readFile", {"path": "x"})]))
    s.close()
    assert s.transcript is not None
    return s.transcript.path


def resume_in_process(data: Path, path: Path, rounds: int = 5) -> tuple[float, int]:
    import shutil

    from framework_core.core.session import resume_session

    times = []
    for _ in range(rounds):
        copy = path.with_name("bench-copy.jsonl")
        shutil.copyfile(path, copy)  # each round repairs and writes back, like a first resume after a kill
        start = time.perf_counter()
        session, loaded = resume_session(data, copy)
        times.append(time.perf_counter() - start)
        session.close()
        copy.unlink()
    return statistics.median(times), len(loaded.messages)


def resume_command(workspace: Path, home: Path, base_url: str, rounds: int = 3) -> tuple[float, float]:
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "cfg"),
           "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": base_url}

    def run(*args: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args, "-p", "hi"], cwd=workspace,
                       env=env, capture_output=True, timeout=120)
        return time.perf_counter() - start

    fresh, resumed = [], []
    for _ in range(rounds):
        fresh.append(run())
        resumed.append(run("--resume", "long"))
    return statistics.median(resumed), statistics.median(fresh)


RSS_CHILD = r"""
import json, os, sys, tempfile
from pathlib import Path
from benchmarks.bench_resume import _rss_mb
from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply

ws = Path(tempfile.mkdtemp(prefix="laca-rss-"))
with FakeOpenAIServer() as server:
    (ws / "framework_config.yaml").write_text(f"llm_settings:\n  openai:\n    base_url: {server.base_url}\n")
    os.environ["OPENAI_API_KEY"] = "k"
    loaded = load_config(ws, Overrides(trust=True))
    session = open_session(ws / "data")
    agent = build_agent(loaded, events=lambda e: None, approver=ScriptedApprover(), session=session,
                        start_mcp=False).agent
    samples = {}
    for turn in range(1, 1001):
        server.enqueue(Reply(text=f"answer {turn}: " + "words " * 30, chunk_size=64))
        agent.run_turn(f"question {turn}: " + "about the code " * 5)
        server.requests.clear()  # the fake keeps every request; its memory is not ours to measure
        if turn % 50 == 0:
            session.clear()  # each request carries the whole history: keep it short so 1,000 turns stay quick
        if turn in (100, 500, 1000):
            samples[turn] = _rss_mb()
    print(json.dumps({"samples": samples, "messages": len(session.messages)}))
"""


def rss_over_turns() -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", RSS_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure() -> list[Row]:
    from tests.fakes.openai_server import FakeOpenAIServer

    home = Path(tempfile.mkdtemp(prefix="laca-resume-"))
    workspace = home / "ws"
    workspace.mkdir()
    data = home / "data" / "laca"
    path = write_long_session(data, workspace)
    long = path.with_name("long.jsonl")
    path.rename(long)
    size_mb = long.stat().st_size / 1e6
    took, count = resume_in_process(data, long)
    rows = [absolute_row(f"resume a {MESSAGES:,}-message session", took, 1.0, "s",
                         f"{count:,} messages, transcript {size_mb:.1f} MB; lock, load, repair written back")]
    with FakeOpenAIServer() as server:
        resumed, fresh = resume_command(workspace, home, server.base_url)
    rows.append(reference_row("laca --resume -p (10k msgs) vs fresh -p", resumed, fresh, "s",
                              "whole command: start-up, resume, a request carrying the whole history"))
    rss = rss_over_turns()
    s = {int(k): v for k, v in rss["samples"].items()}
    growth = s[1000] - s[100]
    rows.append(absolute_row("RSS growth, turn 100 to 1,000", growth, 20.0, "MB",
                             f"RSS {s[100]:.0f} MB at turn 100, {s[500]:.0f} at 500, {s[1000]:.0f} at 1,000 "
                             f"({rss['messages']:,} messages in the history)"))
    return rows


def main() -> int:
    from benchmarks.common import format_table

    rows = measure()
    table = format_table(rows)
    print(table)
    if "--append" in sys.argv:
        import platform

        machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write(f"\n## Durability: resume and memory (bench_resume, {time.strftime('%Y-%m-%d %H:%M')}, "
                     f"{machine})\n\n```\n{table}\n```\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
