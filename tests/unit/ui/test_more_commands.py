"""Custom slash commands from Markdown, /init and the peers' instruction files, /last, /clear, notifications."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from typing import Iterator

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.dcm import DynamicContextManager
from framework_core.core.session import open_session
from framework_core.ui.custom_commands import load_commands
from framework_core.ui.more_commands import notify_done
from framework_core.ui.render import EventRenderer
from framework_core.ui.repl import Repl
from framework_core.app.wiring import build_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec


@pytest.fixture
def repl(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Repl, io.StringIO, FakeOpenAIServer]]:
    server = FakeOpenAIServer()
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (workspace / "framework_config.yaml").write_text(f"llm_settings:\n  openai:\n    base_url: {server.base_url}\n")
    loaded = load_config(workspace, Overrides())
    buf = io.StringIO()
    console = Console(file=buf, width=100, color_system=None)
    renderer = EventRenderer(console)
    data = Path(os.environ["XDG_DATA_HOME"]) / "laca"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        parts = build_agent(loaded, events=renderer, approver=ScriptedApprover(), session=open_session(data),
                            start_mcp=False)
        yield Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput()), buf, server
    server.close()


def test_markdown_commands_with_arguments(workspace: Path, isolated_env: Path) -> None:
    ws_dir = workspace / ".laca" / "commands"
    (ws_dir / "frontend").mkdir(parents=True)
    (ws_dir / "review.md").write_text("---\ndescription: Review a file\nargument-hint: FILE\n---\n"
                                      "Review $ARGUMENTS for bugs; start with $1.\n")
    (ws_dir / "frontend" / "test.md").write_text("# Run the frontend tests\nRun them.\n")
    user_dir = Path(os.environ["XDG_CONFIG_HOME"]) / "laca" / "commands"
    user_dir.mkdir(parents=True)
    (user_dir / "review.md").write_text("the user's own review\n")
    (user_dir / "help.md").write_text("never shadows /help\n")
    found = load_commands(workspace)
    assert found["review"].source == "workspace" and found["review"].description == "Review a file"
    assert found["review"].expand("a.py b.py") == "Review a.py b.py for bugs; start with a.py."
    assert found["frontend:test"].description == "Run the frontend tests"
    assert found["frontend:test"].expand("--watch").endswith("Run them.\n\n--watch")  # arguments never dropped


def test_a_custom_command_sends_its_text_and_is_listed(repl, workspace: Path) -> None:
    r, buf, server = repl
    (workspace / ".laca" / "commands").mkdir(parents=True)
    (workspace / ".laca" / "commands" / "explain.md").write_text("Explain $ARGUMENTS simply.\n")
    server.enqueue(Reply(text="Simply put."))
    r.handle("/explain the sandbox")
    assert server.sent_messages()[-1]["content"] == "Explain the sandbox simply."
    r.handle("/help")
    assert "/explain" in buf.getvalue() and "Your commands" in buf.getvalue()


def test_init_writes_agents_md_from_what_it_finds_and_uses_it(repl, workspace: Path) -> None:
    r, buf, server = repl
    (workspace / "README.md").write_text("# Tool\n\nA tool that counts words in files.\n")
    (workspace / "Makefile").write_text("test:\n\tpytest\nlint:\n\truff .\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "count.py").write_text("print(1)\n")
    r.handle("/init")
    text = (workspace / "AGENTS.md").read_text()
    assert "A tool that counts words in files." in text and "`make test`" in text and "`make lint`" in text
    assert "Python (1 file)" in text and "- `src/`" in text
    server.enqueue(Reply(text="ok"))
    r.handle("hello")
    assert "counts words" in str(server.requests[-1])  # in the instructions sent
    r.handle("/init")
    assert "exists; /init --force" in buf.getvalue()


def test_claude_md_and_gemini_md_are_read_once_each(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("agents rules")
    (ws / "CLAUDE.md").write_text("claude rules")
    (ws / "GEMINI.md").write_text("agents rules")  # the same text is not sent twice
    (ws / "forge.md").write_text("You are forge.")
    (ws / "FRAMEWORK_CONTEXT.md").write_text("## Personas\nforge: @./forge.md\n")
    dcm = DynamicContextManager(str(ws / "FRAMEWORK_CONTEXT.md"), workspace=ws)
    prompt = dcm.build_system_prompt("forge")
    assert "(AGENTS.md)\nagents rules" in prompt and "(CLAUDE.md)\nclaude rules" in prompt
    assert prompt.count("agents rules") == 1


def test_last_shows_the_whole_output_of_the_last_call(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {"command": "seq 1 60",
                                                                         "icerc_full_text": "b"})]), Reply(text="ok"))
    r.handle("count")
    shown = buf.getvalue().replace("  │ ", "")
    assert "\n30\n" not in shown and "\n60\n" in shown  # the screen showed the head and the tail
    r.handle("/last")
    assert "executeBashCommand" in buf.getvalue() and "\n30\n" in buf.getvalue()[len(shown):]


def test_clear_starts_a_new_session_and_keeps_the_old_one(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="first answer"))
    r.handle("remember kiwi")
    old = r.facade.session_id
    r.handle("/clear")
    assert r.facade.session_id != old and r.facade.recap() == [] and r.facade.last_turn_usage() is None
    assert f"--resume {old}" in buf.getvalue()
    server.enqueue(Reply(text="fresh"))
    r.handle("what fruit?")
    assert all("kiwi" not in str(m.get("content")) for m in server.sent_messages())
    from framework_core.core.session import find_session

    assert find_session(Path(os.environ["XDG_DATA_HOME"]) / "laca", old) is not None


def test_a_bell_after_a_long_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True)
    monkeypatch.setenv("LACA_NOTIFY_AFTER_S", "5")
    notify_done(console, time.monotonic() - 1)
    assert buf.getvalue() == ""
    notify_done(console, time.monotonic() - 6)
    assert buf.getvalue() == "\a"
    monkeypatch.setenv("LACA_NOTIFY", "desktop")
    notify_done(console, time.monotonic() - 6)
    assert "\x1b]777;notify;LACA;" in buf.getvalue()
    monkeypatch.setenv("LACA_NOTIFY", "off")
    before = buf.getvalue()
    notify_done(console, time.monotonic() - 60)
    assert buf.getvalue() == before


def test_resume_switches_in_place_to_an_earlier_session(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="noted"))
    r.handle("remember kiwi")
    old = r.facade.session_id
    r.handle("/new")  # Claude Code's name for /clear
    assert r.facade.session_id != old and r.facade.recap() == []
    r.handle(f"/resume {old}")
    assert r.facade.session_id == old and "Resumed session" in buf.getvalue() and "you: remember kiwi" in buf.getvalue()
    server.enqueue(Reply(text="kiwi it was"))
    r.handle("which fruit?")
    assert any(m.get("content") == "remember kiwi" for m in server.sent_messages())


def test_resume_of_an_unknown_id_says_so_and_the_session_goes_on(repl) -> None:
    r, buf, server = repl
    before = r.facade.session_id
    r.handle("/resume no-such-session")
    assert "no session 'no-such-session'" in buf.getvalue() and r.facade.session_id == before


def test_peers_command_names_work_or_say_which_command_does_it(repl) -> None:
    r, buf, server = repl
    r.handle("/cost")
    assert "Estimated cost" in buf.getvalue()
    for name, words in (("config", "laca config show"), ("memory", "AGENTS.md")):
        r.handle(f"/{name}")
        assert words in buf.getvalue()
    r.handle("/status")
    assert "sandbox" in buf.getvalue() and r.facade.session_id in buf.getvalue()
    for alias, command in (("rewind", "undo"), ("diff", "changes"), ("approvals", "show-permissions")):
        from framework_core.ui.slash import lookup

        found = lookup(alias)
        assert found is not None and found.name == command


def test_claude_code_command_files_work_unchanged(workspace: Path, isolated_env: Path) -> None:
    claude = workspace / ".claude" / "commands"
    claude.mkdir(parents=True)
    (claude / "hello.md").write_text("---\ndescription: Say hello\nargument-hint: NAME\nallowed-tools: Bash(echo:*)\n"
                                     "---\nSay hello to $ARGUMENTS.\n")
    user = Path(os.environ["HOME"]) / ".claude" / "commands"
    user.mkdir(parents=True)
    (user / "mine.md").write_text("My own command.\n")
    found = load_commands(workspace)
    assert found["hello"].description == "Say hello" and found["hello"].expand("Ada") == "Say hello to Ada."
    assert found["mine"].source == "user"


def test_resume_with_a_prefix_that_fits_two_sessions_asks_for_more(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="one"))
    r.handle("first session")
    r.handle("/new")
    server.enqueue(Reply(text="two"))
    r.handle("second session")
    current = r.facade.session_id
    r.handle(f"/resume {current}")
    assert "is this session" in buf.getvalue() and r.facade.session_id == current
    r.handle(f"/resume {current[:4]}")  # both ids start with the year
    assert "matches 2 sessions" in buf.getvalue() and r.facade.session_id == current
