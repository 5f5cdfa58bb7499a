"""Prompt caching on Anthropic: an agent loop of ten tool rounds, run with caching on (the default) and off,
against the fake Messages server, whose prompt cache accounts as the API does. Per round: input tokens
billed at the full rate, written to the cache, read from it, and the cost of that input at the model's
prices (claude-sonnet-5-5: $2 per million input, $2.50 cache writes, $0.10 cache reads).

    .venv/bin/python -m benchmarks.bench_cache           # prints the rounds
    .venv/bin/python -m benchmarks.bench_cache --write   # and appends them to benchmarks/RESULTS.md
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.common import Row, ratio_row

MODEL = "claude-sonnet-5-5"
ROUNDS = 10


def run_loop(caching: bool) -> list:
    """The usage of each request of one turn: ten tool rounds, then the closing reply."""
    from framework_core.core.approval import ScriptedApprover
    from framework_core.config.load import Overrides, load_config
    from framework_core.core.events import AssistantMessageDone
    from framework_core.core.session import open_session
    from framework_core.app.wiring import build_agent
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.script import Reply, ToolCallSpec

    ws = Path(tempfile.mkdtemp(prefix="laca-cache-"))
    (ws / "notes.txt").write_text("a line of notes\n" * 20)
    events: list = []
    with FakeAnthropicServer() as server:
        (ws / "framework_config.yaml").write_text(
            f"llm_provider: anthropic\nllm_settings:\n  anthropic:\n    base_url: {server.base_url}\n"
            f"    model: {MODEL}\n    prompt_caching: {'true' if caching else 'false'}\n")
        os.environ["ANTHROPIC_API_KEY"] = "k"
        agent = build_agent(load_config(ws, Overrides(trust=True)), events=events.append, approver=ScriptedApprover(),
                            session=open_session(ws / "data"), start_mcp=False).agent
        read = ToolCallSpec("readFile", {"path": "notes.txt", "icerc_full_text": "Intent: read the notes"})
        server.enqueue(*[Reply(text=f"Round {i + 1}: reading again.", tool_calls=[read]) for i in range(ROUNDS)],
                       Reply(text="Done after ten rounds."))
        agent.run_turn("read notes.txt ten times, one call at a time")
        prices = agent.caps.prices
    # the cost of the input alone (uncached, written, read): output is the same with or without caching
    return [(e.usage, prices.cost(replace(e.usage, output_tokens=0))) for e in events
            if isinstance(e, AssistantMessageDone)]


def measure() -> list[Row]:
    cached = run_loop(True)
    plain = run_loop(False)
    ours, base = sum(c for _, c in cached), sum(c for _, c in plain)
    return [ratio_row(f"{ROUNDS} tool rounds on Anthropic: input cost, cached", ours * 1e3, base * 1e3, 0.5,
                      unit="m$", note="baseline = the same loop with prompt_caching: false")]


def table(cached: list, plain: list) -> str:
    lines = ["| request | cached: input | cache write | cache read | input cost | uncached: input | input cost |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for n, ((u, c), (p, pc)) in enumerate(zip(cached, plain, strict=True), start=1):
        label = f"round {n}" if n <= ROUNDS else "closing reply"
        lines.append(f"| {label} | {u.input_tokens:,} | {u.cache_write_tokens:,} | {u.cache_read_tokens:,} | "
                     f"${c:.6f} | {p.input_tokens:,} | ${pc:.6f} |")
    columns = [(u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, c) for u, c in cached]
    total = [sum(x) for x in zip(*columns, strict=True)]
    ptotal = [sum(x) for x in zip(*[(p.input_tokens, pc) for p, pc in plain], strict=True)]
    lines.append(f"| **total** | {total[0]:,} | {total[1]:,} | {total[2]:,} | ${total[3]:.6f} | {ptotal[0]:,} | "
                 f"${ptotal[1]:.6f} |")
    return "\n".join(lines), total[3] / ptotal[1]


def main() -> int:
    cached, plain = run_loop(True), run_loop(False)
    text, ratio = table(cached, plain)
    print(text)
    print(f"\ninput cost with caching: {ratio:.2f}× the cost without")
    if "--write" in sys.argv:
        path = Path(__file__).resolve().parent / "RESULTS.md"
        section = (
            f"\n## Prompt caching on Anthropic: {ROUNDS} tool rounds (`python -m benchmarks.bench_cache`)\n\n"
            f"Recorded {time.strftime('%Y-%m-%d %H:%M %Z')} against the fake Messages server, whose prompt cache "
            "accounts as the API does (a breakpoint writes its prefix, a later request reads the longest written "
            "prefix at or up to 20 blocks before one of its breakpoints, `input_tokens` counts only what follows "
            f"the last breakpoint). Model {MODEL}; cost at its prices ($2 per million input, $2.50 cache writes, "
            "$0.10 cache reads). LACA marks the tools, the system prompt and the last two user turns, so each "
            "round reads the whole unchanged prefix and writes only the round it adds.\n\n"
            f"{text}\n\nInput cost with caching: {ratio:.2f}× the cost without.\n")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(section)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
