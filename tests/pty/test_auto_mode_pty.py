"""Auto mode as the user reaches it: Shift-Tab three times, the status line names it, and a command that would
ask runs in the sandbox without a question, said with the /undo that reverts it."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.script import Reply, ToolCallSpec

PROMPT = "forge>"


def test_shift_tab_reaches_auto_and_a_local_command_runs_sandboxed(spawn, fake_openai, workspace: Path) -> None:
    child = spawn(env={"PROMPT_TOOLKIT_NO_CPR": ""})
    while child.expect([r"\x1b\[6n", r"ctx \d+%"]) == 0:
        child.send("\x1b[10;1R")
    child.send("\x1b[Z")  # Shift-Tab: accept edits
    child.expect_exact("accept edits")
    child.send("\x1b[Z")  # plan
    child.expect_exact("plan mode")
    child.send("\x1b[Z")  # auto
    child.expect_exact("auto · sandboxed")
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": "echo auto > auto.txt", "icerc_full_text": "Command: echo auto > auto.txt"})]), Reply(text="made"))
    child.sendline("make it")
    child.expect_exact("/undo 1")  # the result line: auto · sandboxed · /undo 1, and no question before it
    child.expect_exact("made")
    assert (workspace / "auto.txt").read_text() == "auto\n"
    sent = fake_openai.sent_messages()
    assert any("switched to auto mode" in m["content"] for m in sent if m["role"] == "user")  # the model is told
    tool = [m for m in sent if m["role"] == "tool"][-1]
    assert tool["content"].startswith("ok · exit 0")  # ran without a question: none was answered
