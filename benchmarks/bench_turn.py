"""Per-turn overhead: a 500-message history, an instant fake server; the framework's
time per turn beyond the SDK call itself."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row, require_loopback


def measure(rounds: int = 15) -> list[Row]:
    from framework_core.core.approval import ScriptedApprover
    from framework_core.config.load import Overrides, load_config
    from framework_core.lial_core import Message
    from framework_core.core.session import open_session
    from framework_core.app.wiring import build_agent
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.script import Reply

    ws = Path(tempfile.mkdtemp(prefix="laca-ws-"))
    with FakeOpenAIServer() as server:
        # The fake address comes from the SDK's environment variable: a workspace config would be ignored in an
        # untrusted workspace, and the requests would go to the default endpoint.
        home = Path(tempfile.mkdtemp(prefix="laca-bench-home-"))
        os.environ.update(OPENAI_API_KEY="k", OPENAI_BASE_URL=server.base_url, HOME=str(home),
                          XDG_CONFIG_HOME=str(home / "c"), XDG_DATA_HOME=str(home / "d"))
        loaded = load_config(ws, Overrides())
        session = open_session(ws / "data")
        agent = build_agent(loaded, events=lambda e: None, approver=ScriptedApprover(), session=session,
                            start_mcp=False).agent
        for i in range(250):
            session.add(Message("user", f"question {i} " * 20))
            session.add(Message("assistant", f"answer {i} " * 40))
        require_loopback(str(agent.llm.adapter.client.base_url))
        inner = agent.llm.adapter.stream
        spent = [0.0]

        def timed_stream(*args, **kwargs):
            """Time spent inside the SDK call (and the adapter's translation) is not ours to count."""
            gen = inner(*args, **kwargs)
            while True:
                t = time.perf_counter()
                try:
                    event = next(gen)
                except StopIteration:
                    spent[0] += time.perf_counter() - t
                    return
                spent[0] += time.perf_counter() - t
                yield event

        agent.llm.adapter.stream = timed_stream  # type: ignore[method-assign]
        ours, sdk = [], []
        for _ in range(rounds):
            server.enqueue(Reply(text="ok", chunk_size=64))
            spent[0] = 0.0
            start = time.perf_counter()
            agent.run_turn("next")
            ours.append(time.perf_counter() - start - spent[0])
            sdk.append(spent[0])
            session.replace(session.messages[:-2], "bench")  # keep the history at 500 messages
    overhead_ms = statistics.median(ours) * 1000
    return [absolute_row("per-turn overhead, 500-message history", overhead_ms, 10, "ms",
                         note=f"framework time outside the SDK call (median of {rounds}); SDK call "
                              f"{statistics.median(sdk) * 1000:.1f} ms")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
