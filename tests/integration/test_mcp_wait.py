"""The first request waits a bounded time for MCP servers still starting, and says so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.events import Notice
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply

SLOW = str(Path(__file__).with_name("mcp_servers") / "slow_server.py")


def test_first_request_says_it_waits_then_goes_on_without_a_slow_server(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, openai_server: FakeOpenAIServer) -> None:
    openai_server._queue.clear()
    openai_server.enqueue(Reply(text="answered without the slow server"))
    (workspace / "framework_config.yaml").write_text(
        f"llm_provider: openai\nllm_settings:\n  openai:\n    base_url: {openai_server.base_url}\n"
        f"    model: fake-model\nmcp_startup_wait_s: 0.5\nmcp_servers:\n  slow:\n    command: {sys.executable}\n"
        f"    args: [{SLOW}]\n    env: {{SLOW_START_S: '20'}}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    events: list = []
    parts = build_agent(load_config(workspace, Overrides()), events=events.append, approver=ScriptedApprover(),
                        session=open_session(workspace.parent / "data"), start_mcp=True)
    try:
        outcome = parts.agent.run_turn("hello")
    finally:
        parts.agent.mcp.close()
    notices = [(e.level, e.text) for e in events if isinstance(e, Notice)]
    assert ("info", "Waiting up to 0.5 s for MCP server(s) still starting: slow (Ctrl-C stops waiting)") in notices
    assert any(level == "warning" and "continuing without them: slow" in text for level, text in notices)
    assert outcome.text == "answered without the slow server" and not outcome.error
    sent_tools = openai_server.sent_tool_names()
    assert not any(name.startswith("mcp__slow__") for name in sent_tools)
