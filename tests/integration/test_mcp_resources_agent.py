"""MCP resources and prompts reaching the model (asserted on what the fake LLM server received): a resource
attached with `@server:uri` and a prompt run as `/mcp__server__prompt` in the REPL, through prompt_toolkit's pipe
input, and a resource link in a result read by the model with `mcp__<server>__readMcpResource`."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Iterator

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from framework_core.app.wiring import build_agent
from framework_core.config.load import Overrides, load_config
from framework_core.core.approval import ScriptedApprover
from framework_core.core.session import open_session
from framework_core.ui.completion import LacaCompleter
from framework_core.ui.render import EventRenderer
from framework_core.ui.repl import Repl
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec
from tests.integration.mcp_servers import CASES, wait_for
from tests.integration.test_mcp_agent import agent_for, call

NOTE = "Buy kiwis. The meeting moved to Thursday."


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest):
    return request.param, request.getfixturevalue(f"{request.param}_server")


def test_the_model_reads_a_linked_resource(wire, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name, server = wire
    agent, _ = agent_for(name, server, workspace, monkeypatch)
    read = Reply(tool_calls=[ToolCallSpec("mcp__cases__readMcpResource",
                                          {"uri": "mem://notes/today", "icerc_full_text": "read the linked note"})])
    server.enqueue(call("link_note"), read, Reply(text="You need kiwis."))
    try:
        outcome = agent.run_turn("what does my note say?")
    finally:
        agent.mcp.close()
    first, last = json.dumps(server.requests[1]), json.dumps(server.requests[-1])
    assert "mcp__cases__readMcpResource" in json.dumps(server.requests[0])  # offered to the model
    assert "uri: mem://notes/today" in first and NOTE in last and outcome.text == "You need kiwis."


@pytest.fixture
def repl(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Repl, io.StringIO, FakeOpenAIServer]]:
    server = FakeOpenAIServer()
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (workspace / "framework_config.yaml").write_text(
        f"llm_settings:\n  openai:\n    base_url: {server.base_url}\nmcp_startup_wait_s: 30\n"
        f"mcp_servers:\n  cases:\n    command: {sys.executable}\n    args: [{CASES}]\n")
    buf = io.StringIO()
    console = Console(file=buf, width=100, color_system=None)
    renderer = EventRenderer(console)
    data = Path(os.environ["XDG_DATA_HOME"]) / "laca"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        parts = build_agent(load_config(workspace, Overrides()), events=renderer, approver=ScriptedApprover(),
                            session=open_session(data), start_mcp=True)
        r = Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput())
        try:
            wait_for(lambda: parts.facade.mcp_prompts(), 60, "the cases server's prompts")
            yield r, buf, server
        finally:
            parts.facade.close()
            server.close()


def test_an_attached_resource_reaches_the_model(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="Kiwis."))
    r.handle("what should I buy? @cases:mem://notes/today")
    sent = server.sent_messages()[-1]["content"]
    assert sent.startswith("what should I buy? @cases:mem://notes/today")
    assert f'<resource server="cases" uri="mem://notes/today">\n{NOTE}\n</resource>' in sent
    assert "attached @cases:mem://notes/today" in buf.getvalue()


def test_a_resource_that_cannot_be_read_is_said_and_not_sent(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="ok"))
    r.handle("look at @cases:other://nothing please")
    assert "<resource" not in server.sent_messages()[-1]["content"]
    said = " ".join(buf.getvalue().split())
    assert ("@cases:other://nothing: not attached: MCP server 'cases' could not read other://nothing: resource not "
            "found") in said


def test_a_prompt_runs_as_a_slash_command(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="Hello, Ada!"))
    r.handle("/mcp__cases__greet Ada style=warmly")
    assert server.sent_messages()[-1]["content"] == "Greet Ada warmly, please."
    r.handle("/mcp__cases__greet")
    assert "/mcp__cases__greet needs name" in buf.getvalue()
    r.handle("/help")
    assert "/mcp__cases__greet <name> [style]" in buf.getvalue()
    r.handle("/mcp__cases__nope")
    assert "prompts are commands once the server is ready" in " ".join(buf.getvalue().split())


def test_what_a_prompt_cannot_carry_is_named(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="A red square."))
    r.handle("/mcp__cases__picture")
    assert server.sent_messages()[-1]["content"] == "Describe this picture."
    assert "left out of the prompt (not text): message 2: image image/png" in buf.getvalue()


def test_completion_lists_resources_and_prompts(repl) -> None:
    r, _, _ = repl
    completer = LacaCompleter(r)

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("read @cases:mem://no") == ["cases:mem://notes/today", "cases:mem://notes/{name}"]
    assert "cases:mem://big" in complete("read @ca")
    assert complete("/mcp__cases__g") == ["mcp__cases__greet"]


def test_mcp_says_how_to_use_a_servers_resources_and_prompts(repl) -> None:
    r, buf, _ = repl
    r.handle("/mcp")
    said = " ".join(buf.getvalue().split())
    assert ("cases: 4 resource(s): @cases:URI attaches one (Tab lists them); 2 prompt(s): /mcp__cases__NAME runs one"
            in said)
