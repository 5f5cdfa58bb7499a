"""What a user of Claude Code, Codex or Gemini CLI types, in a real terminal and in pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect

from tests.fakes.script import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "forge>"


def run(*args: str, workspace: Path, env: dict[str, str] | None = None, stdin: str | None = None,
        ) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    full.update(env or {})
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args], cwd=workspace,
                          env=full, input=stdin if stdin is not None else "", capture_output=True, text=True,
                          timeout=60)


def keys(fake) -> dict[str, str]:
    return {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake.base_url}


def test_version_and_refused_combinations(workspace: Path) -> None:
    assert run("--version", workspace=workspace).stdout.startswith("laca ")
    empty = run("-p", "", workspace=workspace)
    assert empty.returncode == 2 and "-p got an empty prompt" in empty.stderr
    both = run("--continue", "--resume", "x", workspace=workspace)
    assert both.returncode == 2 and "--continue and --resume both pick a session" in both.stderr


def test_piped_data_comes_with_the_prompt_and_a_pipe_alone_is_a_prompt(workspace: Path, fake_openai) -> None:
    fake_openai._queue.clear()
    r = run("-p", "summarise this", workspace=workspace, env=keys(fake_openai), stdin="line one\nline two\n")
    assert r.returncode == 0, r.stderr
    assert fake_openai.sent_messages()[-1]["content"] == "summarise this\n\nline one\nline two\n"
    r = run(workspace=workspace, env=keys(fake_openai), stdin="hi from a pipe\n")
    assert r.returncode == 0 and "You said" in r.stdout and "\x1b[" not in r.stdout  # no prompt drawn into a pipe


def test_json_output_is_claude_code_shaped_and_errors_are_json(workspace: Path, fake_openai) -> None:
    fake_openai._queue.clear()
    fake_openai.enqueue(Reply(text="Sure.", tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": "touch x", "icerc_full_text": "Command: touch x"})]), Reply(text="Declined, fine."))
    r = run("-p", "make x", "--output-format", "json", workspace=workspace, env=keys(fake_openai))
    out = json.loads(r.stdout)
    assert out["type"] == "result" and out["subtype"] == "success" and out["is_error"] is False
    assert out["num_turns"] == 2 and out["result"] == "Declined, fine." and out["session_id"]
    assert out["duration_ms"] >= 0 and "total_cost_usd" in out and out["model"] == "gpt-6.2-sol"
    assert out["permission_denials"][0]["tool_input"]["command"] == "touch x"
    fake_openai.enqueue(Reply(text="ok"))
    lines = run("-p", "hi", "--output-format", "stream-json", workspace=workspace, env=keys(fake_openai)).stdout
    first, last = json.loads(lines.splitlines()[0]), json.loads(lines.splitlines()[-1])
    assert (first["type"], first["subtype"]) == ("system", "init") and last["type"] == "result"
    failed = run("-p", "hi", "--output-format", "json", workspace=workspace)  # no key
    assert failed.returncode == 2 and json.loads(failed.stdout)["is_error"] is True


def test_allow_lets_a_one_shot_run_what_matches(workspace: Path, fake_openai) -> None:
    fake_openai._queue.clear()
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": "touch allowed.txt", "icerc_full_text": "b"})]), Reply(text="done"))
    r = run("-p", "go", "--allow", "touch", workspace=workspace, env=keys(fake_openai))
    assert r.returncode == 0 and (workspace / "allowed.txt").exists(), r.stderr


def test_a_first_message_on_the_command_line_starts_the_repl_with_it(spawn, fake_openai) -> None:
    child = spawn("fix the failing test")
    child.expect(r"You said: \S*fix\S* \S*the\S* \S*failing")  # the reply styles each word
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_without_a_key_the_repl_stays_open(spawn) -> None:
    child = spawn(env={"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "OPENAI_BASE_URL": ""})
    child.expect_exact("No API key for provider 'openai'")
    child.expect_exact("OPENAI_BASE_URL")
    child.expect_exact(PROMPT)
    child.sendline("/help")
    child.expect_exact("/provider")
    child.sendline("hello")
    child.expect_exact("error: No API key")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_only_an_anthropic_key_picks_anthropic(spawn, fake_anthropic) -> None:
    fake_anthropic.enqueue(Reply(text="from claude"))
    child = spawn(env={"OPENAI_API_KEY": ""}, provider="")
    child.expect_exact("Using anthropic: ANTHROPIC_API_KEY is set")
    child.expect_exact(PROMPT)
    child.sendline("hi")
    child.expect_exact("from claude")


def test_output_format_without_p_is_refused(spawn) -> None:
    child = spawn("--output-format", "json")
    child.expect_exact("--output-format applies to one-shot runs")
    child.expect(pexpect.EOF)


def test_continue_with_no_earlier_session_starts_a_new_one(spawn, fake_openai) -> None:
    child = spawn("--continue")
    child.expect_exact("No earlier session for")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_a_sentence_typed_at_the_approval_does_nothing_but_a_hint(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": "touch typed.txt", "icerc_full_text": "Command: touch typed.txt"})]), Reply(text="after"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("go")
    child.expect_exact("Allow?")  # the question is drawn: it reads the keys from here on
    child.send("what is this?")
    child.expect_exact("Typing here does not answer")
    child.send("\r")  # only clears the line: were it an answer, Esc would find no question to stop
    child.send("\x1b")  # Esc: stop the turn; the next prompt is where the user says what to do instead
    child.expect_exact("the turn stops here")
    child.expect_exact(PROMPT)
    child.sendline("use the other file")
    child.expect_exact("after")
    assert not (workspace / "typed.txt").exists()
    tool = [m for m in fake_openai.sent_messages() if m["role"] == "tool"][-1]
    assert "stopped the turn" in tool["content"]
    assert fake_openai.sent_messages()[-1]["content"] == "use the other file"


def test_shift_tab_cycles_the_modes_in_the_status_line(spawn, fake_openai) -> None:
    child = spawn(env={"PROMPT_TOOLKIT_NO_CPR": ""})
    while child.expect([r"\x1b\[6n", r"ctx \d+%"]) == 0:
        child.send("\x1b[10;1R")
    child.send("\x1b[Z")  # Shift-Tab
    child.expect_exact("accept edits")
    child.send("\x1b[Z")
    child.expect_exact("plan mode")
    fake_openai.enqueue(Reply(text="planning"))
    child.sendline("what next?")
    child.expect_exact("planning")
    assert "plan mode" in fake_openai.sent_messages()[-1]["content"]  # the model is told


def test_policy_check_applies_the_rule_files_the_repl_applies(workspace: Path, isolated_env: Path) -> None:
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "laca" / "rules.yaml"
    rules.write_text("rules:\n  - name: tests\n    action: allow\n    prefix: [pytest]\n"
                     "  - name: no-push\n    action: deny\n    prefix: [git, push]\n")
    r = run("policy", "check", "pytest -q", "git push origin main", "touch x", workspace=workspace)
    assert r.returncode == 0, r.stderr
    assert "→ runs without asking (rule tests" in r.stdout and "→ blocked (rule no-push" in r.stdout
    assert "→ asks first" in r.stdout
    lines = run("policy", "check", "--jsonl", workspace=workspace, stdin='{"cmd": "pytest -q"}\n').stdout
    assert json.loads(lines)["decision"] == "allow"


def test_esc_stops_a_reply_and_a_running_command(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(text="word " * 400, chunk_size=5, delay_s=0.01))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("long please")
    child.expect_exact("word word")
    child.send("\x1b")
    child.expect_exact("Interrupted")
    child.expect_exact(PROMPT)
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": "sleep 4242.5", "icerc_full_text": "b"})]), Reply(text="after the stop"))
    child.sendline("sleep")
    child.expect_exact("running")
    time.sleep(1.0)  # not a wait: the command is let run a second, so the report must say at least that
    child.send("\x1b")
    child.expect(r"interrupted by the user.*· ([0-9.]+)s")  # the time it ran, not 0.00s
    assert float(child.match.group(1)) >= 0.9
    child.expect_exact(PROMPT)  # within the 20 s of expect: stopped, not waited out (it sleeps 4242 s)
    child.sendline("again")
    child.expect_exact("after the stop")


def test_keys_typed_while_a_reply_streams_wait_in_the_next_prompt(spawn, fake_openai) -> None:
    fake_openai.enqueue(Reply(text="slowly " * 60, chunk_size=7, delay_s=0.02), Reply(text="got the typed one"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("go")
    child.expect_exact("slowly slowly")
    child.send("typed early")
    child.expect_exact(PROMPT)
    child.expect_exact("typed early")  # in the input box, not sent
    child.send("\r")
    child.expect_exact("got the typed one")
    assert fake_openai.sent_messages()[-1]["content"] == "typed early"


def test_y_and_enter_typed_while_the_model_thinks_never_reach_it(spawn, fake_openai) -> None:
    """Typed ahead with Enter, "y" waits in the next prompt as a draft: it is not sent as a message."""
    fake_openai.enqueue(Reply(text="slowly " * 60, chunk_size=7, delay_s=0.02), Reply(text="the next one"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("go")
    child.expect_exact("slowly slowly")
    child.send("y\r")
    child.expect_exact(PROMPT)
    child.expect_exact("y")  # the draft, in the input box
    child.send("\x15")  # Ctrl-U clears it
    child.sendline("next")
    child.expect_exact("the next one")
    users = [m["content"] for m in fake_openai.sent_messages() if m["role"] == "user"]
    assert users == ["go", "next"]


def test_continue_restores_the_persona_and_shows_the_last_exchange(spawn, fake_openai) -> None:
    fake_openai.enqueue(Reply(text="noted the melon"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("/persona catalyst")
    child.expect_exact("catalyst>")
    child.sendline("remember melon")
    child.expect_exact("noted the melon")
    child.expect_exact("catalyst>")  # keys typed before the prompt is back wait in it as a draft, unsent
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    again = spawn("--continue")
    again.expect_exact("Last exchange:")
    again.expect_exact("you: remember melon")
    again.expect_exact("catalyst>")  # the persona the session last used
    again.sendline("/exit")
    again.expect(pexpect.EOF)


def test_resume_without_an_id_offers_a_pick_list(spawn, fake_openai) -> None:
    fake_openai.enqueue(Reply(text="first reply"), Reply(text="second reply"))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("an opening question")
    child.expect_exact("first reply")
    child.expect_exact(PROMPT)  # keys typed before the prompt is back wait in it as a draft, unsent
    child.sendline("a closing question")
    child.expect_exact("second reply")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    picker = spawn("--resume")
    picker.expect_exact("first: an opening question")
    picker.expect_exact("last:  a closing question")
    picker.expect_exact("Resume which?")
    picker.sendline("1")
    picker.expect_exact("Resumed session")
    picker.expect_exact(PROMPT)
    picker.sendline("/exit")
    picker.expect(pexpect.EOF)


def test_several_keys_and_none_for_the_default_provider_ask_which(spawn, fake_anthropic) -> None:
    fake_anthropic.enqueue(Reply(text="claude here"))
    child = spawn(env={"OPENAI_API_KEY": "", "GEMINI_API_KEY": "g"}, provider="")
    child.expect_exact("Use which provider?")
    child.expect_exact("[1] anthropic")
    child.expect_exact("Pick 1-")  # the question itself is drawn (keys sent before it are flushed)
    child.send("1\r")
    child.expect_exact("Using anthropic")
    child.expect_exact(PROMPT)
    child.sendline("hi")
    child.expect_exact("claude here")


def test_a_one_shot_dry_run_reports_what_it_would_do_not_declines(workspace: Path, fake_openai) -> None:
    fake_openai._queue.clear()
    fake_openai.enqueue(Reply(tool_calls=[
        ToolCallSpec("executeBashCommand", {"command": "echo x > d1.txt", "icerc_full_text": "b"}),
        ToolCallSpec("writeFile", {"path": "d2.txt", "content": "hello\n", "icerc_full_text": "b"})]),
        Reply(text="previewed"))
    r = run("--dry-run", "-p", "go", workspace=workspace, env=keys(fake_openai))
    assert r.returncode == 0 and "declined" not in r.stderr
    assert "dry run: echo x > d1.txt would make: 1 file created: d1.txt (not applied)" in r.stderr
    assert "dry run: writeFile d2.txt shown, not made" in r.stderr
    assert not (workspace / "d1.txt").exists() and not (workspace / "d2.txt").exists()
