"""The REPL prompt's keys, through prompt_toolkit's pipe input: new lines, pastes, the editor, Esc."""

from __future__ import annotations

import io
import threading
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
from framework_core.core.session import open_session
from framework_core.ui.prompt_keys import Pastes
from framework_core.ui.render import EventRenderer
from framework_core.ui.repl import Repl
from framework_core.app.wiring import build_agent
from tests.waiting import wait_until


@pytest.fixture
def repl(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Repl, object]]:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    loaded = load_config(workspace, Overrides())
    console = Console(file=io.StringIO(), width=100, color_system=None)
    renderer = EventRenderer(console)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        parts = build_agent(loaded, events=renderer, approver=ScriptedApprover(), session=open_session(workspace / "d"),
                            start_mcp=False)
        yield Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput()), pipe


def test_ctrl_j_and_a_backslash_before_enter_add_a_line(repl) -> None:
    r, pipe = repl
    pipe.send_text("one\ntwo\r")  # \n is Ctrl-J
    assert r.read() == "one\ntwo"
    pipe.send_text("three \\\rfour\r")
    assert r.read() == "three \nfour"


def test_a_long_paste_is_collapsed_and_sent_whole(repl) -> None:
    r, pipe = repl
    pasted = "".join(f"line {i}\n" for i in range(61))
    pipe.send_text("look: \x1b[200~" + pasted + "\x1b[201~ thanks\r")
    assert r.read() == "look: " + pasted + " thanks"
    pastes = Pastes()
    assert pastes.keep(pasted) == "[pasted 61 lines #1]"
    assert pastes.expand("a [pasted 61 lines #1] b [pasted 3 lines #9]") == f"a {pasted} b [pasted 3 lines #9]"


def test_esc_then_a_key_after_a_pause_is_that_key_not_alt(repl) -> None:
    r, pipe = repl
    box = r.prompt_session().default_buffer  # the session read() uses

    def esc_pause_b() -> None:
        wait_until(lambda: box.text == "ab")
        pipe.send_text("\x1b")
        time.sleep(0.4)  # the pause under test: a key this long after Esc is that key, not Alt and the key
        pipe.send_text("b\r")  # with Alt-b this would move back a word instead

    pipe.send_text("ab")
    threading.Thread(target=esc_pause_b, daemon=True).start()
    assert r.read() == "abb"


def test_ctrl_g_edits_the_draft_and_puts_it_back_unsent(repl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r, pipe = repl
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "%s and more" "$(cat "$1")" > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    box = r.prompt_session().default_buffer  # the session read() uses
    pipe.send_text("draft\x07")

    def enter_once_edited() -> None:
        wait_until(lambda: box.text == "draft and more")  # back in the box, not sent
        pipe.send_text("\r")

    threading.Thread(target=enter_once_edited, daemon=True).start()
    assert r.read() == "draft and more"
