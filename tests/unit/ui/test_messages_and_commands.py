"""What typed text is: a slash command, or a message (paths, pasted blocks); @mentions always accounted for."""

from __future__ import annotations

import io
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
from framework_core.ui.completion import expand_attachments
from framework_core.ui.render import EventRenderer
from framework_core.ui.repl import Repl
from framework_core.ui.slash import is_command, near_misses
from framework_core.app.wiring import Parts, build_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply


@pytest.fixture
def app(workspace: Path,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Repl, io.StringIO, FakeOpenAIServer, Parts]]:
    """A REPL on a fake server, and the parts behind its façade (for tests that stand in for a restart)."""
    server = FakeOpenAIServer()
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (workspace / "framework_config.yaml").write_text(f"llm_settings:\n  openai:\n    base_url: {server.base_url}\n")
    loaded = load_config(workspace, Overrides())
    buf = io.StringIO()
    console = Console(file=buf, width=100, color_system=None)
    renderer = EventRenderer(console)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        parts = build_agent(loaded, events=renderer, approver=ScriptedApprover(), session=open_session(workspace / "d"),
                            start_mcp=False)
        yield Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput()), buf, server, parts
    server.close()


@pytest.fixture
def repl(app) -> tuple[Repl, io.StringIO, FakeOpenAIServer]:
    return app[:3]


def test_paths_and_pasted_blocks_are_messages() -> None:
    assert is_command("/tokens") and is_command("  /model gpt-x ") and is_command("/tokns")
    assert not is_command("/tmp/x/main.py has a bug")
    assert not is_command("/tokens\nand the rest of a pasted log")
    assert not is_command("/etc is read-only?")  # not a command, and a folder that exists
    assert not is_command("//help is a message") and not is_command("/~/notes.txt")
    assert near_misses("tokns")[0] == "tokens" and near_misses("prov") == ["provider"]


def test_a_message_starting_with_a_path_is_sent(repl) -> None:
    r, buf, server = repl
    server.enqueue(Reply(text="Looking."), Reply(text="Pasted."), Reply(text="Slashes."))
    r.handle("/tmp/x/main.py has a bug")
    r.handle("/tokens\nline two of a pasted block")
    r.handle("//help is what I typed")
    sent = [m["content"] for m in server.sent_messages() if m["role"] == "user"]
    assert sent[-3:] == ["/tmp/x/main.py has a bug", "/tokens\nline two of a pasted block", "/help is what I typed"]
    assert "unknown command" not in buf.getvalue()


def test_an_unknown_command_offers_the_near_miss(repl) -> None:
    r, buf, _ = repl
    r.handle("/tokns")
    assert "unknown command /tokns. Did you mean /tokens" in buf.getvalue()


def test_every_mention_is_accounted_for(workspace: Path) -> None:
    (workspace / "my file.txt").write_text("spaced\n")
    (workspace / "src").mkdir()
    text, notes = expand_attachments("see @missing.txt and @src", workspace, 1000)
    assert text == "see @missing.txt and @src"
    assert any("@missing.txt: no such file in the workspace; not attached" in n for n in notes)
    assert any("@src is a folder; not attached" in n for n in notes)
    for mention in ('@"my file.txt"', "@'my file.txt'", "@my\\ file.txt", "@my file.txt"):
        text, notes = expand_attachments(f"read {mention} please", workspace, 1000)
        assert '<file path="my file.txt">\nspaced' in text, mention
        assert notes == ["attached @my file.txt (7 bytes)"], mention


def test_bang_runs_a_command_yourself_in_the_sandbox_and_the_model_is_told(repl, workspace: Path) -> None:
    r, buf, server = repl
    r.handle("!echo made > shell.txt && echo done && cat ~/.ssh/id_rsa")
    out = buf.getvalue()
    assert (workspace / "shell.txt").read_text() == "made\n" and "done" in out
    assert "(you typed it (!))" in out and "✗ exit 1" in out  # the credential stays hidden: cat fails
    assert r.facade.changes(), "the change can be undone like an approved command's"
    server.enqueue(Reply(text="I see."))
    r.handle("what happened?")
    sent = server.sent_messages()[-1]["content"]
    assert "the user ran `echo made > shell.txt" in sent and "done" in sent and sent.endswith("what happened?")


def test_bang_output_reaches_the_model_within_the_one_result_budget(repl) -> None:
    """`!cmd` output is cut as a tool call's is (head and tail, the rest saved for readFile), not by a cut of its
    own that loses the middle."""
    import json
    import re

    r, _, server = repl
    r.handle("!seq 1 40000")
    server.enqueue(Reply(text="I see."))
    r.handle("what happened?")
    sent = server.sent_messages()[-1]["content"]
    assert "the user ran `seq 1 40000` themselves" in sent and "1\n2\n3\n" in sent and "40000" in sent
    assert len(sent) < 10_000 + 1_000  # the configured budget, and the header and notes around it
    call = json.loads(re.search(r"Read them with readFile (\{.*?\})", sent).group(1))
    lines = Path(call["path"]).read_text().splitlines()
    assert lines[call["offset"] - 1] == str(call["offset"]) and len(lines) == 40000  # the middle can be read


def test_undo_names_a_file_changed_since_and_why(repl, workspace: Path) -> None:
    r, buf, _ = repl
    r.handle("!echo made > shell.txt")
    (workspace / "shell.txt").write_text("edited by hand\n")
    r._pt_io["input"].send_text("\x04")  # Ctrl-D at "Undo anyway?": the default, no
    r.handle("/undo")
    said = " ".join(buf.getvalue().split())
    assert f"changed since: {workspace / 'shell.txt'} (it was modified since) Nothing was undone." in said


def test_changes_marks_an_interrupted_apply_and_undo_restores_it(app, workspace: Path) -> None:
    from framework_core.sandbox.undo_store import UndoStore
    from framework_core.tools.files import atomic_write

    r, buf, _, parts = app
    (workspace / "a.txt").write_text("old a\n")
    (workspace / "b.txt").write_text("old b\n")
    store = parts.agent.teps.undo
    entry = store.begin("make all", "command")
    for name in ("a.txt", "b.txt"):
        entry.save_preimage(workspace / name, link=True)
    entry.prepare()
    atomic_write(workspace / "a.txt", b"new a\n")  # ... and LACA stops here
    restarted = UndoStore(store.root, store.max_bytes, workspace=workspace)
    parts.agent.teps.undo = restarted  # LACA started again: the store reads what it finds
    assert r.facade.undo_notices() == ["The change set of call 1 (`make all`) was interrupted: 1 of 2 paths "
                                       "landed; `/undo 1` restores it."]
    r.handle("/changes")
    assert "make all  (2 paths, INTERRUPTED: 1 of 2 landed)" in buf.getvalue()
    r.handle("/undo 1")
    assert "Undone: `make all` (2 paths restored)." in buf.getvalue()
    assert (workspace / "a.txt").read_text() == "old a\n" and (workspace / "b.txt").read_text() == "old b\n"


def test_undo_of_a_damaged_record_names_its_file_and_touches_nothing(app, workspace: Path) -> None:
    from framework_core.tools.files import write_with_undo

    r, buf, _, parts = app
    (workspace / "a.txt").write_text("old\n")
    store = parts.agent.teps.undo
    write_with_undo(workspace / "a.txt", b"new\n", append=False, undo=store, label="writeFile a.txt")
    blob = store.root / store.entries()[0].id / "blobs" / "1"
    blob.write_bytes(b"olD\n")  # one byte changed
    r.handle("/undo")
    said = " ".join(buf.getvalue().split())
    assert "Not undone: the undo record of `writeFile a.txt` is damaged; the workspace was not touched." in said
    unwrapped = "".join(buf.getvalue().split())  # long paths wrap at the console's width
    assert f"{blob}:thesavedcopyof{workspace / 'a.txt'}doesnotmatchitsrecord" in unwrapped
    assert (workspace / "a.txt").read_text() == "new\n" and "restored" not in said
    r.handle("/undo")  # the damaged entry was set aside: counted, not "nothing changed"
    again = " ".join(buf.getvalue().split())
    assert "Nothing left to undo: 1 damaged undo entry set aside in this session" in again
    assert "no command or file write has changed" not in again
