"""An MCP image result on each wire that takes images (Chat Completions, Responses, Anthropic Messages), through
the whole agent against the fake LLM servers: a model that takes images gets an image block, a text-only one a
note naming the type, the size and the saved file; the choice is made per request, so a history recorded on
one model stays valid after a switch to the other, either way. `fake-text-only` on the OpenAI fakes refuses
image parts as the API does, so an image sent by mistake fails the turn."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.fakes.script import Reply, ToolCallSpec
from tests.integration.mcp_servers import CASES

#: wire type -> (fake server fixture, a model that takes images, a text-only one, the image part's type)
WIRES = {
    "openai": ("openai_server", "fake-model\n    images: true", "fake-text-only", "image_url"),
    "openai-responses": ("openai_server", "fake-model\n    images: true", "fake-text-only", "input_image"),
    "anthropic": ("anthropic_server", "fake-claude", "fake-model\n    images: false", "image"),
}
NOTE = re.compile(r"\[image 1 \(image/png, 73 bytes\) not shown: [\w-]+ takes no images; saved as (\S+\.png)\]")


@pytest.fixture(params=list(WIRES))
def wire(request: pytest.FixtureRequest):
    fixture, vision, text, part = WIRES[request.param]
    return request.param, request.getfixturevalue(fixture), vision, text, part


def agent_for(wire, workspace: Path, monkeypatch: pytest.MonkeyPatch, first: str):
    kind, server, vision, text, _ = wire
    server._queue.clear()
    server.requests.clear()
    key = "ANTHROPIC_API_KEY" if kind == "anthropic" else "OPENAI_API_KEY"
    entries = "".join(f"  {name}:\n    type: {kind}\n    base_url: {server.base_url}\n    api_key_env_var: {key}\n"
                      f"    request_timeout_s: 5\n    model: {model}\n" for name, model in (("vision", vision),
                                                                                          ("text", text)))
    (workspace / "framework_config.yaml").write_text(
        f"llm_provider: {first}\nllm_settings:\n{entries}mcp_startup_wait_s: 30\n"
        f"mcp_servers:\n  cases:\n    command: {sys.executable}\n    args: [{CASES}]\n    permission: always\n")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-anthropic")
    parts = build_agent(load_config(workspace, Overrides()), events=[].append, approver=ScriptedApprover(()),
                        session=open_session(workspace.parent / "data"), start_mcp=True)
    return parts.agent


def image_turn(agent, server) -> str | None:
    server.enqueue(Reply(tool_calls=[ToolCallSpec("mcp__cases__image", {"icerc_full_text": "call image"})]),
                   Reply(text="seen"))
    return agent.run_turn("show me the picture").error


def sent(server, part: str) -> tuple[bool, str | None]:
    """(an image part was in the last request, the saved file a note named)."""
    body = json.dumps(server.requests[-1])
    note = NOTE.search(body.replace("\\n", "\n"))
    return f'"type": "{part}"' in body, note.group(1) if note else None


def test_an_image_model_gets_an_image_block(wire, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = agent_for(wire, workspace, monkeypatch, "vision")
    try:
        error = image_turn(agent, wire[1])
    finally:
        agent.mcp.close()
    assert (error, sent(wire[1], wire[4])) == (None, (True, None))


def test_a_text_only_model_gets_a_note_naming_the_saved_image(wire, workspace: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    agent = agent_for(wire, workspace, monkeypatch, "text")
    try:
        error = image_turn(agent, wire[1])
    finally:
        agent.mcp.close()
    block, saved = sent(wire[1], wire[4])
    assert (error, block, saved is not None and Path(saved).read_bytes()[:4]) == (None, False, b"\x89PNG")


def test_images_recorded_on_an_image_model_become_notes_after_a_switch(wire, workspace: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    agent = agent_for(wire, workspace, monkeypatch, "vision")
    try:
        image_turn(agent, wire[1])
        agent.set_provider("text")
        wire[1].enqueue(Reply(text="still here"))
        outcome = agent.run_turn("and now?")
    finally:
        agent.mcp.close()
    block, saved = sent(wire[1], wire[4])
    assert (outcome.error, outcome.text, block, saved is not None) == (None, "still here", False, True)


def test_images_recorded_on_a_text_only_model_are_sent_after_a_switch(wire, workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    agent = agent_for(wire, workspace, monkeypatch, "text")
    try:
        image_turn(agent, wire[1])
        agent.set_provider("vision")
        wire[1].enqueue(Reply(text="now I see it"))
        outcome = agent.run_turn("and now?")
    finally:
        agent.mcp.close()
    assert (outcome.error, sent(wire[1], wire[4])) == (None, (True, None))
