"""MCP through the whole agent, against the fake LLM servers on both wires: an image is kept apart from the
result's text (test_mcp_images.py follows it onto each wire), server instructions join the system prompt marked
as theirs, a server that fails to start is said once, and a history grown past a smaller model's window is cut
in the request instead of wedging."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.events import Notice
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.fakes.script import Reply, ToolCallSpec
from tests.integration.mcp_servers import CASES


def agent_for(wire: str, server, workspace: Path, monkeypatch: pytest.MonkeyPatch, *, extra: str = "",
              window: int | None = None, answers: tuple[str, ...] = ()):
    server._queue.clear()
    server.requests.clear()
    limit = f"    context_window: {window}\n    max_tokens: 512\n" if window else ""
    (workspace / "framework_config.yaml").write_text(
        f"llm_provider: {wire}\nllm_settings:\n  {wire}:\n    type: {wire}\n    base_url: {server.base_url}\n"
        f"    model: fake-model\n    request_timeout_s: 5\n{limit}mcp_startup_wait_s: 30\n"
        f"mcp_servers:\n  cases:\n    command: {sys.executable}\n    args: [{CASES}]\n    permission: always\n{extra}")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-anthropic")
    events: list = []
    parts = build_agent(load_config(workspace, Overrides()), events=events.append, approver=ScriptedApprover(answers),
                        session=open_session(workspace.parent / "data"), start_mcp=True)
    return parts.agent, events


def call(tool: str, **args) -> Reply:
    return Reply(tool_calls=[ToolCallSpec(f"mcp__cases__{tool}", {**args, "icerc_full_text": f"call {tool}"})])


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest):
    return request.param, request.getfixturevalue(f"{request.param}_server")


def test_the_image_is_not_sent_as_text(wire, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name, server = wire
    agent, _ = agent_for(name, server, workspace, monkeypatch)
    server.enqueue(call("image"), Reply(text="ok"))
    try:
        agent.run_turn("show me the picture")
    finally:
        agent.mcp.close()
    result = [m for m in agent.session.messages if m.role == "tool_result"][0]
    assert ("[image 1: image/png" in result.content, "iVBOR" in result.content, len(result.images)) == (True, False, 1)


def test_server_instructions_join_the_system_prompt(openai_server, workspace: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    agent, _ = agent_for("openai", openai_server, workspace, monkeypatch)
    openai_server.enqueue(Reply(text="hi"))
    try:
        agent.run_turn("hello")
    finally:
        agent.mcp.close()
    system = openai_server.requests[-1]["messages"][0]["content"]
    assert "### From MCP server 'cases'\nCall echo to repeat text." in system


def test_a_server_that_fails_to_start_is_said_once(openai_server, workspace: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    agent, events = agent_for("openai", openai_server, workspace, monkeypatch,
                              extra="  broken:\n    command: /nonexistent/mcp-server\n")
    openai_server.enqueue(Reply(text="one"), Reply(text="two"))
    try:
        agent.run_turn("first")
        agent.run_turn("second")
    finally:
        agent.mcp.close()
    said = [e.text for e in events if isinstance(e, Notice) and "'broken' failed to start" in e.text]
    assert said == ["MCP server 'broken' failed to start: command not found: /nonexistent/mcp-server (install it, or "
                    f"fix the server's command). See {agent.mcp.log_dir / 'mcp-broken.log'}"]


def big_write(n: int) -> Reply:
    """A call whose own arguments are large (no output budget bounds them, compaction keeps them)."""
    return Reply(tool_calls=[ToolCallSpec("writeFile", {"path": f"part{n}.txt", "content": "x" * 40_000,
                                                        "icerc_full_text": f"write part {n}"}, id=f"call_w{n}")])


def test_a_turn_grown_past_a_small_window_is_cut_in_the_request(wire, workspace: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Three large calls in one turn: too recent to compact, so the request itself is cut to fit."""
    name, server = wire
    agent, _ = agent_for(name, server, workspace, monkeypatch, window=8_192, answers=("n", "n", "n"))
    server.enqueue(big_write(1), big_write(2), big_write(3), Reply(text="written"))
    try:
        outcome = agent.run_turn("write three parts")
    finally:
        agent.mcp.close()
    assert (outcome.text, max(len(json.dumps(r)) for r in server.requests) < 8_192 * 4) == ("written", True)


def test_the_cut_is_said_to_the_user(openai_server, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, events = agent_for("openai", openai_server, workspace, monkeypatch, window=8_192, answers=("n", "n", "n"))
    openai_server.enqueue(big_write(1), big_write(2), big_write(3), Reply(text="written"))
    try:
        agent.run_turn("write three parts")
    finally:
        agent.mcp.close()
    assert any("no longer fits fake-model's context window (8,192 tokens)" in e.text
               for e in events if isinstance(e, Notice))


def test_a_huge_json_rpc_error_reaches_the_model_within_the_budget(wire, workspace: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget is applied where any result becomes model text, errors included: 200,000 characters of a
    server's error go out as head and tail, the whole saved for paging."""
    name, server = wire
    agent, _ = agent_for(name, server, workspace, monkeypatch)
    server.enqueue(call("huge_rpc_error"), Reply(text="noted"))
    try:
        agent.run_turn("call it")
    finally:
        agent.mcp.close()
    result = [m for m in agent.session.messages if m.role == "tool_result"][0]
    assert "HEAD" in result.content and "TAIL" in result.content and len(result.content) < 12_000
    assert server.sizes[-1] < 40_000
