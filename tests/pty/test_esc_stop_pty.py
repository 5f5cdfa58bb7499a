"""Esc at an approval stops the turn, as in Claude Code: the call asked about and every call after it are
answered as not run, nothing more is asked or sent, and the prompt is where the user says what to do instead.
And the approval panel on a 60x20 terminal keeps what decides the answer."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.script import Reply, ToolCallSpec

PROMPT = "forge>"


def touch(name: str, cid: str) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": f"touch {name}", "icerc_full_text": f"Command: touch {name}"},
                        id=cid)


def test_esc_at_the_second_of_three_questions_stops_the_turn(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(tool_calls=[touch("one.txt", "e1"), touch("two.txt", "e2"), touch("three.txt", "e3")]))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("three steps")
    child.expect_exact("call 1 of 3")
    child.expect_exact("Allow?")
    child.sendline("y")
    child.expect_exact("call 2 of 3")
    child.expect_exact("Allow?")
    sent = len(fake_openai.requests)
    child.send("\x1b")
    child.expect_exact("the turn stops here")
    child.expect_exact("Stopped. Tell the model what to do instead.")
    child.expect_exact(PROMPT)
    assert "call 3 of 3" not in child.before  # the third was never asked
    assert len(fake_openai.requests) == sent  # nothing was sent to the model after the Esc
    assert (workspace / "one.txt").exists() and not (workspace / "three.txt").exists()
    fake_openai.enqueue(Reply(text="fine, a temp folder then"))
    child.sendline("use a temp folder instead")
    child.expect_exact("fine, a temp folder then")
    assert len(fake_openai.requests) == sent + 1
    messages = fake_openai.sent_messages()
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert list(results) == ["e1", "e2", "e3"] and results["e1"].startswith("ok")
    assert all(results[c].startswith("Not run") and "stopped the turn" in results[c] for c in ("e2", "e3"))
    assert messages[-1] == {"role": "user", "content": "use a temp folder instead"}


def test_at_60x20_the_panel_keeps_the_delete_the_risk_flag_and_the_scope_of_a(spawn, fake_openai,
                                                                             workspace: Path) -> None:
    command = "mkdir -p build && rm -rf build"
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": command, "icerc_full_text": f"Intent: tidy\nCommand: {command}\nRisk assessment: low"})]))
    child = spawn(env={"COLUMNS": "60", "LINES": "20"})
    child.setwinsize(20, 60)
    child.expect_exact(PROMPT)
    child.sendline("tidy up")
    child.expect_exact("Run command")
    child.expect_exact(" · needs confirmation")  # the title (its first part bold)
    child.expect_exact("⚠ Brief says low risk; the command deletes files.")
    child.expect_exact('"rm -rf build": deletes files')  # the decisive reason, first
    child.expect_exact("╰" + "─" * 58 + "╯")  # the panel drawn 60 wide
    child.expect(r"a always, this session:(\x1b\[[0-9;]*m)*\r\r\n(\x1b\[[0-9;]*m)*    exactly this command: "
                 r"mkdir -p build && rm -rf build")  # the scope whole, on a row of its own
    child.expect_exact("Esc stop the turn")
    child.send("\x1b")
    child.expect_exact("Stopped. Tell the model what to do instead.")
    child.expect_exact(PROMPT)
