"""The REPL through prompt_toolkit's pipe input: key bindings, completion, slash commands."""

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
from framework_core.ui.completion import LacaCompleter, expand_attachments
from framework_core.ui.render import EventRenderer
from framework_core.ui.repl import Repl
from framework_core.app.wiring import build_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply


@pytest.fixture
def repl(workspace: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Repl, object, io.StringIO, FakeOpenAIServer]]:
    server = FakeOpenAIServer()
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (workspace / "framework_config.yaml").write_text(
        f"llm_settings:\n  openai:\n    base_url: {server.base_url}\n")
    loaded = load_config(workspace, Overrides())
    buf = io.StringIO()
    console = Console(file=buf, width=100, color_system=None)
    renderer = EventRenderer(console)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        parts = build_agent(loaded, events=renderer, approver=ScriptedApprover(), session=open_session(workspace / "d"),
                            start_mcp=False)
        r = Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput())
        yield r, pipe, buf, server
    server.close()


def test_enter_sends_and_escape_enter_adds_a_line(repl) -> None:
    r, pipe, _, _ = repl
    pipe.send_text("first line\x1b\rsecond line\r")
    assert r.read() == "first line\nsecond line"


def test_ctrl_c_clears_a_non_empty_buffer(repl) -> None:
    r, pipe, _, _ = repl
    pipe.send_text("draft\x03kept\r")
    assert r.read() == "kept"


def test_conversation_through_the_loop(repl) -> None:
    r, pipe, buf, server = repl
    server.enqueue(Reply(text="Pipe reply."))
    pipe.send_text("hello\r/exit\r")
    assert r.run() == 0
    assert "Pipe reply." in buf.getvalue()
    assert server.sent_messages()[-1]["content"] == "hello"


def test_slash_completion_and_arguments(repl) -> None:
    r, _, _, _ = repl
    comp = LacaCompleter(r)
    names = [c.text for c in comp.get_completions(Document("/pro"), CompleteEvent())]
    assert names == ["provider"]
    personas = [c.text for c in comp.get_completions(Document("/persona "), CompleteEvent())]
    assert {"forge", "catalyst"} <= set(personas)
    providers = [c.text for c in comp.get_completions(Document("/provider an"), CompleteEvent())]
    assert providers == ["anthropic"]
    models = [c.text for c in comp.get_completions(Document("/model gpt-6.2"), CompleteEvent())]
    assert "gpt-6.2-astra" in models


def test_at_path_completion_and_attachment(repl, workspace: Path) -> None:
    r, _, _, _ = repl
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    comp = LacaCompleter(r)
    assert [c.text for c in comp.get_completions(Document("look at @sr"), CompleteEvent())] == ["src/"]
    assert [c.text for c in comp.get_completions(Document("look at @src/a"), CompleteEvent())] == ["src/app.py"]
    text, notes = expand_attachments("explain @src/app.py please", workspace, 5)
    assert '<file path="src/app.py">' in text and "truncated" in text and "truncated" in notes[0]


def test_slash_commands_switch_and_toggle(repl) -> None:
    r, _, buf, _ = repl
    r.handle("/persona catalyst")
    assert r.facade.persona == "catalyst"
    r.handle("/persona nosuch")
    assert "Valid personas" in buf.getvalue()
    r.handle("/allow-dangerous off")
    assert not r.facade.allow_dangerous  # "off" never turns it on
    r.handle("/allow-dangerous on")
    assert r.facade.allow_dangerous
    assert "ALLOW-DANGEROUS" in "".join(t for _, t in r.prompt_message())
    r.handle("/dry-run on")
    r.handle("/dry-run on")
    assert r.facade.dry_run  # "on" twice stays on
    r.handle("/dry-run")
    assert "Dry run is ON" in buf.getvalue()
    r.handle("/dry-run off")
    assert not r.facade.dry_run
    r.handle("/tools")
    assert "executeBashCommand" in buf.getvalue()
    r.handle("/nope")
    assert "unknown command /nope" in buf.getvalue()
    r.handle("/help")
    assert "Permissions" in buf.getvalue() and "/revoke N" in buf.getvalue()


def test_edit_composes_the_next_message_in_editor(repl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r, _, _, _ = repl
    editor = tmp_path / "fake-editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'a long\\nmulti-line prompt' > \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    r.handle("/edit")
    assert r.pending_input == "a long\nmulti-line prompt"


def test_ctrl_r_searches_history(repl) -> None:
    r, pipe, _, _ = repl
    pipe.send_text("deploy the staging build\r")
    assert r.read() == "deploy the staging build"
    pipe.send_text("other\r")
    assert r.read() == "other"
    pipe.send_text("\x12staging\r\r")  # Ctrl-R, type a fragment, Enter accepts the match, Enter sends it
    assert r.read() == "deploy the staging build"
