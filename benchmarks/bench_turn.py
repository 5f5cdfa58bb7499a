"""Per-turn overhead (issue 6, target 4): a 500-message history, an instant fake server; the framework's
time per turn beyond the SDK call itself."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row


def measure(rounds: int = 15) -> list[Row]:
    from framework_core.approval import ScriptedApprover
    from framework_core.config_load import Overrides, load_config
    from framework_core.lial_core import Message, StreamDone
    from framework_core.session import open_session
    from framework_core.wiring import build_agent
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.script import Reply

    ws = Path(tempfile.mkdtemp(prefix="laca-ws-"))
    with FakeOpenAIServer() as server:
        (ws / "framework_config.yaml").write_text(f"llm_settings:\n  openai:\n    base_url: {server.base_url}\n")
        os.environ["OPENAI_API_KEY"] = "k"
        loaded = load_config(ws, Overrides())
        session = open_session(ws / "data")
        agent = build_agent(loaded, events=lambda e: None, approver=ScriptedApprover(), session=session,
                            start_mcp=False).agent
        for i in range(250):
            session.add(Message("user", f"question {i} " * 20))
            session.add(Message("assistant", f"answer {i} " * 40))
        ours, sdk = [], []
        for _ in range(rounds):
            server.enqueue(Reply(text="ok", chunk_size=64))
            start = time.perf_counter()
            agent.run_turn("next")
            ours.append(time.perf_counter() - start)
            server.enqueue(Reply(text="ok", chunk_size=64))
            system = agent.dcm.build_system_prompt(agent.persona_id)
            tools = agent.teps.registry.schemas()
            msgs = list(session.messages)
            start = time.perf_counter()
            for ev in agent.adapter.stream(msgs, tools, system):
                if isinstance(ev, StreamDone):
                    break
            sdk.append(time.perf_counter() - start)
            session.replace(session.messages[:-2], "bench")  # keep the history at 500 messages
    overhead_ms = (statistics.median(ours) - statistics.median(sdk)) * 1000
    return [absolute_row("per-turn overhead, 500-message history", max(overhead_ms, 0.0), 10, "ms",
                         note=f"turn {statistics.median(ours)*1000:.1f} ms vs SDK call {statistics.median(sdk)*1000:.1f} ms")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
