"""/model: the profile of the model in use, the server's own list (GET /models) and completion from it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterator

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.session import open_session
from framework_core.ui.completion import LacaCompleter
from framework_core.ui.render import EventRenderer
from framework_core.ui.repl import Repl
from framework_core.app.wiring import build_agent
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.script import Reply
from tests.waiting import wait_until


@pytest.fixture
def claude_repl(workspace: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Repl, io.StringIO, FakeAnthropicServer]]:
    server = FakeAnthropicServer()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    (workspace / "framework_config.yaml").write_text(
        f"llm_provider: anthropic\nllm_settings:\n  anthropic:\n    base_url: {server.base_url}\n")
    loaded = load_config(workspace, Overrides())
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        renderer = EventRenderer(console)
        parts = build_agent(loaded, events=renderer, approver=ScriptedApprover(), session=open_session(workspace / "d"),
                            start_mcp=False)
        yield Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput()), buf, server
    server.close()


def test_model_shows_the_profile_and_what_the_server_offers(claude_repl) -> None:
    repl, buf, _ = claude_repl
    repl.slash("/model")
    out = buf.getvalue()
    assert "claude-sonnet-5-5: context 1,000,000 · output limit 32,000 (max 128,000)" in out
    assert "The server offers" in out and "fake-claude" in out and "claude-haiku-5-5" in out


def test_switching_model_switches_the_profile_and_requests_follow_it(claude_repl) -> None:
    repl, buf, server = claude_repl
    repl.slash("/model")  # lists the server's models (and so knows them when a name is not among them)
    repl.slash("/model claude-haiku-4-5")
    assert repl.facade.status().model == "claude-haiku-4-5" and "claude-haiku-4-5: context 200,000" in buf.getvalue()
    server.enqueue(Reply(text="small model"))
    repl.facade.turn("hi")
    assert server.requests[-1]["model"] == "claude-haiku-4-5" and server.requests[-1]["max_tokens"] == 16_000
    repl.slash("/model local-thing")
    out = buf.getvalue()
    assert "no profile: safe defaults" in out and "No capability profile for model 'local-thing'" in out
    assert "does not list 'local-thing'" in out


def test_model_completion_offers_the_servers_models(claude_repl) -> None:
    repl, _, _ = claude_repl
    completer = LacaCompleter(repl)

    def names() -> list[str]:
        return [c.text for c in completer.get_completions(Document("/model fake-"), CompleteEvent())]

    wait_until(lambda: "fake-small-context" in names())  # the first completion starts the fetch in the background
    assert {"fake-claude", "fake-small-context"} <= set(names())
