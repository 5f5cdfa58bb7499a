"""Bytes and requests for a small task: what LACA sends the model, on each wire API, in `-p`.

The scripted task: the model reads a 58 KB text file of 1,500 lines with `cat`, lists the folder with `ls`,
then answers. The fake servers record every request's body as it arrived; the row is the total bytes sent,
against the figure this code sent before tool results became plain text under one output budget.

    .venv/bin/python -m benchmarks.bench_task_bytes           # per request and in total
    .venv/bin/python -m benchmarks.bench_task_bytes --write   # and appends them to benchmarks/RESULTS.md
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, ratio_row

ROOT = Path(__file__).resolve().parent.parent
LINES = 1_500
PROMPT = "Read big.txt, list this folder, then tell me how many lines big.txt has."
#: Bytes the same task sent before (JSON-escaped results, a 30,000-character output budget), per wire.
BEFORE = {"openai": 81_866, "openai-responses": 82_439, "anthropic": 82_138}
#: Models with a capability profile (a known window and prices), as a user of each wire would pick.
MODELS = {"openai": "gpt-6.2-sol", "openai-responses": "gpt-6.2-sol", "anthropic": "claude-sonnet-5-5"}


def sample_text() -> str:
    """1,500 lines, 58,500 bytes: a log-like file whose every line is different."""
    return "".join(f"{i:05d} INFO worker-{i % 7} request {i * 7919 % 100_000:06d} ok.\n" for i in range(1, LINES + 1))


def _server(wire: str):
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.openai_server import FakeOpenAIServer

    return FakeAnthropicServer() if wire == "anthropic" else FakeOpenAIServer()


def run_task(wire: str) -> list[int]:
    """Run the task with `laca -p` against the fake server for `wire`; the bytes of each request."""
    sys.path.insert(0, str(ROOT))
    from tests.fakes.script import Reply, ToolCallSpec, icerc

    home = Path(tempfile.mkdtemp(prefix="laca-bench-"))
    ws = Path(tempfile.mkdtemp(prefix="laca-ws-"))
    (ws / "big.txt").write_text(sample_text())
    (ws / "notes.md").write_text("# Notes\n\nNothing here yet.\n")
    with _server(wire) as server:
        config = home / "bench.yaml"
        config.write_text(f"llm_provider: bench\nllm_settings:\n  bench:\n    type: {wire}\n"
                          f"    base_url: {server.base_url}\n    model: {MODELS[wire]}\n"
                          "    api_key_env_var: BENCH_KEY\n")
        calls = [ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": icerc(cmd)})
                 for cmd in ("cat big.txt", "ls")]
        server.enqueue(Reply(tool_calls=calls[:1]), Reply(tool_calls=calls[1:]),
                       Reply(text=f"big.txt has {LINES:,} lines; the folder holds big.txt and notes.md."))
        env = {**{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}, "HOME": str(home),
               "XDG_DATA_HOME": f"{home}/d", "XDG_CONFIG_HOME": f"{home}/c", "BENCH_KEY": "k"}
        subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--config", str(config),
                        "-p", PROMPT], env=env, cwd=ws, capture_output=True, check=True, timeout=120)
        return list(server.sizes)


def measure() -> list[Row]:
    rows = []
    for wire in ("openai", "openai-responses", "anthropic"):
        sizes = run_task(wire)
        per = ", ".join(f"{s:,}" for s in sizes)
        rows.append(ratio_row(f"bytes and requests for a small task ({wire})", sum(sizes) / 1000,
                              BEFORE[wire] / 1000, 0.5, unit="KB",
                              note=f"{len(sizes)} requests: {per} bytes; baseline = the same task before"))
    return rows


def table() -> str:
    lines = ["| wire | requests | bytes per request | total | before | ratio |", "|---|---:|---|---:|---:|---:|"]
    for wire in ("openai", "openai-responses", "anthropic"):
        sizes = run_task(wire)
        lines.append(f"| {wire} | {len(sizes)} | {', '.join(f'{s:,}' for s in sizes)} | {sum(sizes):,} | "
                     f"{BEFORE[wire]:,} | {sum(sizes) / BEFORE[wire]:.2f} |")
    return "\n".join(lines)


def main() -> int:
    text = table()
    print(text)
    if "--write" in sys.argv:
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write(f"\n## Bytes and requests for a small task (`python -m benchmarks.bench_task_bytes`)\n\n"
                     f"Recorded {time.strftime('%Y-%m-%d %H:%M %Z')} with `laca -p` against the fake servers: the "
                     f"model reads a {len(sample_text().encode()):,}-byte file of {LINES:,} lines with `cat`, lists "
                     "the folder, answers. Bytes are the request bodies as the fake servers received them; "
                     "'before' is the same task on the code before tool results became plain text under one "
                     "output budget.\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
