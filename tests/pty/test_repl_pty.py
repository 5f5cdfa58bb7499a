"""The REPL in a real pseudo-terminal: prompt, streaming, approvals, typeahead guard, Ctrl-C, resume."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pexpect

from tests.fakes.script import Reply, ToolCallSpec
from tests.waiting import alive, descendants, wait_for, wait_until

PROMPT = "forge>"


def bash_call(cmd: str, cid: str) -> ToolCallSpec:
    args = {"command": cmd, "icerc_full_text": f"Intent: test\nCommand: {cmd}"}
    return ToolCallSpec("executeBashCommand", args, id=cid)


def test_prompt_chat_status_line_and_exit(spawn, fake_openai) -> None:
    child = spawn(env={"PROMPT_TOOLKIT_NO_CPR": ""})
    for part in ("gpt-6.2-sol", "ctx 0%", "persona forge", r"session \d{8}-"):  # the status line
        while child.expect([r"\x1b\[6n", part]) == 0:
            child.send("\x1b[10;1R")  # answer cursor position requests like a real terminal
    child.sendline("hello pty")
    child.expect_exact("You said:")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_three_call_reply_decided_y_n_a(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(text="Three.", tool_calls=[bash_call("touch p1", "a"), bash_call("touch p2", "b"),
                                                         bash_call("touch p3", "c")]), Reply(text="All decided."))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("go")
    for key, marker in (("y", "call 1 of 3"), ("n", "call 2 of 3"), ("a", "call 3 of 3")):
        child.expect_exact(marker)
        child.expect_exact("Allow?")  # the question is drawn: it reads the keys from here on
        child.send(key + "\r")  # a key alone, then Enter
        if key == "n":
            child.expect_exact("Why not?")
            child.sendline("not that one")
    child.expect_exact("All decided.")
    child.expect_exact(PROMPT)
    assert (workspace / "p1").exists() and not (workspace / "p2").exists() and (workspace / "p3").exists()
    tool_msgs = [m for m in fake_openai.sent_messages() if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["a", "b", "c"]
    assert "not that one" in tool_msgs[1]["content"]


def test_key_typed_before_prompt_does_not_answer_it(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(text="Thinking slowly " * 20, chunk_size=4, delay_s=0.02,
                              tool_calls=[bash_call("touch early.txt", "e")]), Reply(text="ok"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("go")
    child.expect_exact("Thinking")
    child.send("y")  # typed while the reply streams, before the approval prompt exists
    child.expect_exact("Allow?")
    child.send("n\r")
    child.expect_exact("Why not?")  # the line held only the n: the early y was not taken as typed at the question
    child.sendline("")
    child.expect_exact(PROMPT)
    assert not (workspace / "early.txt").exists()


def test_ctrl_c_mid_stream_then_next_turn_accepted_by_anthropic(spawn, fake_anthropic) -> None:
    fake_anthropic.enqueue(Reply(text="word " * 400, chunk_size=5, delay_s=0.01), Reply(text="Next answer fine."))
    child = spawn(provider="anthropic")
    child.expect_exact(PROMPT)
    child.sendline("long please")
    child.expect_exact("word word")
    child.sendintr()
    child.expect_exact(PROMPT)
    child.sendline("again")
    child.expect_exact("Next answer fine.")
    child.expect_exact(PROMPT)


def test_ctrl_c_kills_running_command_group(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(tool_calls=[bash_call("sleep 3031.5 & sleep 3032.5", "k")]),
                        Reply(text="after interrupt"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("run it")
    child.expect_exact("Run command")  # Safe: it runs without asking (read-only, in the sandbox)
    sleepers = wait_for(lambda: descendants(child.pid, "sleep 3031.5"), 10, "the background child to start")
    child.sendintr()
    child.expect_exact(PROMPT)
    assert wait_until(lambda: not any(alive(pid) for pid in sleepers)), "the background child must die with its command"
    child.sendline("hello")
    child.expect_exact("after interrupt")


def test_kill_9_then_continue(spawn, fake_openai) -> None:
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("remember the word pineapple")
    child.expect_exact("You said")
    child.expect_exact(PROMPT)
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    again = spawn("--continue")
    again.expect_exact("Resumed session")
    again.expect_exact(PROMPT)
    fake_openai.enqueue(Reply(text="resumed ok"))
    again.sendline("what word?")
    again.expect_exact("resumed ok")
    sent = [m["content"] for m in fake_openai.sent_messages() if m["role"] == "user"]
    assert any("pineapple" in s for s in sent)


def test_no_color_gives_plain_output(spawn, fake_openai) -> None:
    child = spawn(env={"NO_COLOR": "1"})
    child.expect_exact(PROMPT)
    fake_openai.enqueue(Reply(text="# Title\n\nSome **bold** text.\n"))
    child.sendline("x")
    child.expect_exact("Some bold text.")
    before = child.before + child.after
    assert "\x1b[1m" not in before and "\x1b[3" not in before.replace("\x1b[39", "")


def test_double_ctrl_c_at_empty_prompt_exits(spawn) -> None:
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendintr()
    child.expect_exact("Ctrl-C again")
    child.sendintr()
    child.expect(pexpect.EOF)


def test_spinner_with_elapsed_time_until_first_token(spawn, fake_openai) -> None:
    fake_openai.enqueue(Reply(text="late answer", chunk_size=100, delay_s=1.2))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("slow one")
    child.expect(r"thinking\s+\d+\.\ds")
    child.expect_exact("late answer")


def test_mcp_server_tools_in_the_repl(spawn, fake_openai, workspace: Path) -> None:
    import sys

    (workspace / "framework_config.yaml").write_text(
        "mcp_servers:\n  time:\n    command: " + sys.executable + "\n    args: [-m, mcp_server_time]\n"
        "    tools:\n      get_current_time: always\n")
    child = spawn(env={}, no_mcp=False)
    child.expect_exact(PROMPT)
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("mcp__time__get_current_time",
                                                       {"timezone": "UTC", "icerc_full_text": "Intent: time"})]),
                        Reply(text="It is now."))
    child.sendline("what time is it?")
    child.expect_exact("It is now.")
    results = [m for m in fake_openai.sent_messages() if m["role"] == "tool"]
    assert '"timezone' in results[-1]["content"] and results[-1]["content"].startswith("ok\n")
    child.expect_exact(PROMPT)
    child.sendline("/mcp")
    child.expect("time +ready")  # it has answered a call
    child.sendline("/tools")
    child.expect_exact("mcp__time__get_current_time")


def test_ctrl_c_at_approval_prompt_then_anthropic_accepts_next_turn(spawn, fake_anthropic, workspace: Path) -> None:
    calls = [bash_call("touch never.txt", "toolu_a1"), bash_call("touch nor.txt", "toolu_a2")]
    fake_anthropic.enqueue(Reply(tool_calls=calls),
                           Reply(text="Understood, stopping."))
    child = spawn(provider="anthropic")
    child.expect_exact(PROMPT)
    child.sendline("make files")
    child.expect_exact("call 1 of 2")
    child.expect_exact("Allow?")  # the question is drawn and reads the keys: Ctrl-C is a key to it
    child.sendintr()
    child.expect_exact(PROMPT)
    child.sendline("ok then")
    child.expect_exact("Understood, stopping.")
    assert not (workspace / "never.txt").exists() and not (workspace / "nor.txt").exists()
    last_user = fake_anthropic.requests[-1]["messages"]
    results = [b for m in last_user if isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"]
    assert [b["tool_use_id"] for b in results] == ["toolu_a1", "toolu_a2"]


def test_streamed_markdown_in_a_real_terminal(spawn, fake_openai) -> None:
    import pyte

    from tests.fakes.script import MARKDOWN_SAMPLE

    hostile = "\n\nA reply that tries \x1b]0;pwned\x07 to retitle the window.\n"
    fake_openai.enqueue(Reply(text=MARKDOWN_SAMPLE + hostile, chunk_size=5, delay_s=0.002))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("show me")
    child.expect_exact("retitle the window.")
    raw = child.before + child.after
    child.expect_exact(PROMPT)
    raw += child.before + child.after
    assert "\x1b]0;pwned" not in raw and "␛]0;pwned␇" in raw
    screen = pyte.HistoryScreen(120, 40, history=400)
    pyte.Stream(screen).feed(raw)
    rows = ["".join(ch.data for ch in row.values()).rstrip() for row in screen.history.top]
    rows += [line.rstrip() for line in screen.display]
    text = "\n".join(rows)
    for expected in ("Plan", " 2. Change the rule", "• nested bullet with code", " • ☑ done",
                     "▌ A quoted note with bold inside.", "def classify(cmd: str) -> Level:", "check  result"):
        assert expected in text, expected
    assert "Traceback" not in raw
    assert "```" not in text and "**" not in text and "|---" not in text
    assert sum(1 for row in rows if "def classify" in row) == 1  # drawn live, yet left in the scrollback once
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_message_sent_the_moment_the_prompt_appears_waits_for_start_up(spawn, fake_openai) -> None:
    fake_openai.enqueue(Reply(text="answered after start-up"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("quick")  # before the background start-up has finished
    child.expect_exact("answered after start-up")
    seen = child.before
    child.expect_exact(PROMPT)
    seen += child.before
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    seen += child.before
    assert "Traceback" not in seen and "Exception in thread" not in seen
