"""The command line as a user runs it: exit codes, clear errors without tracebacks, one-shot formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def laca(*args: str, cwd: Path, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    full.update(env or {})
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args], cwd=cwd, env=full,
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_missing_key_names_env_var_and_exits_2(workspace: Path) -> None:
    r = laca("-p", "hi", cwd=workspace)
    assert r.returncode == 2
    assert "OPENAI_API_KEY" in r.stderr and "export" in r.stderr and "Traceback" not in r.stderr
    assert "ANTHROPIC_API_KEY" in r.stderr and "--provider" in r.stderr


def test_broken_yaml_names_file_and_line(workspace: Path) -> None:
    (workspace / "framework_config.yaml").write_text("llm_provider: [openai\n")
    r = laca("-p", "hi", cwd=workspace, env={"OPENAI_API_KEY": "k"})
    assert r.returncode == 2 and "framework_config.yaml" in r.stderr and "line" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_unknown_provider_lists_valid(workspace: Path) -> None:
    r = laca("--provider", "nosuch", "-p", "hi", cwd=workspace)
    assert r.returncode == 2 and "nosuch" in r.stderr and "anthropic" in r.stderr


def test_oneshot_text_and_declined_report(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    server.enqueue(Reply(text="Sure.", tool_calls=[ToolCallSpec("executeBashCommand", {"command": "touch x",
                                                                                        "icerc_full_text": "b"})]),
                   Reply(text="It was declined."))
    r = laca("-p", "make x", cwd=workspace, env=env)
    assert r.returncode == 3  # a call declined for want of an approval (the answer is still printed)
    assert "Sure." in r.stdout and "It was declined." in r.stdout
    assert "declined executeBashCommand" in r.stderr and "touch x" in r.stderr
    assert not (workspace / "x").exists()


def test_oneshot_json_from_stdin(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    (workspace / "f.txt").write_text("data\n")
    server.enqueue(Reply(tool_calls=[ToolCallSpec("readFile", {"path": "f.txt", "icerc_full_text": "b"})]),
                   Reply(text="The file says data."))
    r = laca("-p", "-", "--output-format", "json", cwd=workspace, env=env, stdin="what is in f.txt?")
    assert r.returncode == 0
    out = json.loads(r.stdout)
    assert out["result"] == "The file says data." and out["session_id"]
    assert out["tool_calls"][0]["result"]["data"]["content"] == "data\n"
    assert out["usage"]["input_tokens"] > 0
    assert server.sent_messages(-2)[-1]["content"] == "what is in f.txt?"


def test_oneshot_stream_json(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    server.enqueue(Reply(text="streamed words here", chunk_size=5))
    r = laca("-p", "hi", "--output-format", "stream-json", cwd=workspace, env=env)
    events = [json.loads(line) for line in r.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types == ["system", "assistant", "result"]  # Claude Code's stream-json: init, messages, result
    assert events[1]["message"]["content"] == [{"type": "text", "text": "streamed words here"}]
    assert events[-1]["result"] == "streamed words here" and not events[-1]["is_error"]


def test_runtime_error_exits_1(workspace: Path, server: FakeOpenAIServer) -> None:
    from tests.fakes.script import Fault

    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    server.enqueue(Reply(fault=Fault.http(400)))
    r = laca("-p", "hi", cwd=workspace, env=env)
    assert r.returncode == 1 and "request rejected (HTTP 400)" in r.stderr and "Traceback" not in r.stderr


def test_policy_check_command(workspace: Path) -> None:
    r = laca("policy", "check", "ls -la", "rm -rf ~", cwd=workspace)
    assert r.returncode == 0 and "SAFE" in r.stdout and "DANGEROUS" in r.stdout
    r = laca("policy", "check", "--jsonl", cwd=workspace, stdin='{"cmd": "git status"}\n{"cmd": "curl x | sh"}\n')
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert [record["level"] for record in records] == ["safe", "dangerous"]


def test_config_show_masks_keys_and_names_sources(workspace: Path) -> None:
    r = laca("config", "show", cwd=workspace, env={"OPENAI_API_KEY": "sk-very-secret-value"})
    assert r.returncode == 0 and "sk-very-secret-value" not in r.stdout
    assert "llm_provider = openai    # framework" in r.stdout and "value masked" in r.stdout


def test_config_init_writes_commented_user_config(workspace: Path, isolated_env: Path) -> None:
    r = laca("config", "init", cwd=workspace,
             env={"HOME": str(isolated_env), "XDG_CONFIG_HOME": str(isolated_env / "c")})
    assert r.returncode == 0
    text = (isolated_env / "c" / "laca" / "config.yaml").read_text()
    assert text.startswith("# LACA user config") and "# llm_provider:" in text


def test_help_lists_every_option_and_command_with_examples(workspace: Path) -> None:
    from framework_core.app.cli import command

    r = laca("--help", cwd=workspace)
    assert r.returncode == 0 and "Examples:" in r.stdout and "Exit codes:" in r.stdout
    root, unwrapped = command(), "".join(r.stdout.split())  # the help wraps to the terminal's width
    missing = [p.opts for p in root.params
               if not all(d in r.stdout for d in p.opts) or "".join(p.help.split()) not in unwrapped]
    missing += [name for name in root.list_commands(None) if f"\n  {name} " not in r.stdout]
    assert missing == [] and "--install-completion [SHELL]" in r.stdout


def test_each_subcommand_has_its_help(workspace: Path) -> None:
    shown = {args: laca(*args, "--help", cwd=workspace) for args in (("policy", "check"), ("config", "init"),
                                                                       ("config", "show"), ("doctor",),
                                                                       ("audit", "replay"))}
    assert all(r.returncode == 0 for r in shown.values())
    assert "--jsonl" in shown[("policy", "check")].stdout and "--force" in shown[("config", "init")].stdout
    assert "--all" in shown[("config", "show")].stdout and "Usage: laca doctor" in shown[("doctor",)].stdout
    assert "--since DATE" in shown[("audit", "replay")].stdout


@pytest.mark.parametrize(("args", "said"), [
    (("--bogus",), "laca: No such option: --bogus. See laca --help."),
    (("-p",), "laca: Option '-p' requires an argument. See laca --help."),
    (("--sandbox", "wide-open"), "laca: Invalid value for '--sandbox': 'wide-open' is not one of "
                                 "'workspace-write', 'read-only', 'off'. See laca --help."),
    (("config", "show", "--bogus"), "laca: config show: No such option: --bogus. See laca config show --help."),
])
def test_usage_errors_are_one_line_and_exit_2(workspace: Path, args: tuple[str, ...], said: str) -> None:
    r = laca(*args, cwd=workspace)
    assert (r.returncode, r.stderr, r.stdout) == (2, said + "\n", "")


def test_a_command_group_alone_lists_its_commands(workspace: Path) -> None:
    r = laca("config", cwd=workspace)
    assert r.returncode == 2 and "init" in r.stdout and "show" in r.stdout and r.stderr == ""


def test_version_short_and_long(workspace: Path) -> None:
    assert laca("-v", cwd=workspace).stdout == laca("--version", cwd=workspace).stdout != ""


def test_options_before_a_subcommand_apply_to_its_config(workspace: Path) -> None:
    (workspace / "extra.yaml").write_text("default_persona: catalyst\n")
    r = laca("--provider", "anthropic", "--config", "extra.yaml", "--model", "m-from-flag", "config", "show",
             cwd=workspace)
    assert r.returncode == 0, r.stderr
    assert "llm_provider = anthropic    # flag" in r.stdout and "default_persona = catalyst" in r.stdout
    assert "llm_settings.anthropic.model = m-from-flag    # flag" in r.stdout


def test_config_show_all_lists_every_provider(workspace: Path) -> None:
    active = laca("config", "show", cwd=workspace).stdout
    every = laca("config", "show", "--all", cwd=workspace).stdout
    assert "llm_settings.anthropic.type" not in active and "Other providers: " in active
    assert "llm_settings.anthropic.type" in every and "Other providers" not in every


def test_config_init_keeps_an_existing_file_unless_forced(workspace: Path, isolated_env: Path) -> None:
    env = {"HOME": str(isolated_env), "XDG_CONFIG_HOME": str(isolated_env / "c")}
    first, again, forced = (laca("config", "init", *extra, cwd=workspace, env=env) for extra in ((), (), ("--force",)))
    assert "Wrote" in first.stdout and "exists already" in again.stdout and "Wrote" in forced.stdout


def test_doctor_reads_the_sandbox_flag(workspace: Path) -> None:
    r = laca("--sandbox", "off", "doctor", cwd=workspace)
    assert r.stdout.startswith("Sandbox profile: off") and "off by configuration" in r.stdout
    assert r.returncode == 1 and "✗ API key" in r.stdout and "OPENAI_API_KEY" in r.stdout  # no key: said, not crashed


def test_doctor_checks_the_provider_end_to_end(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    server._queue.clear()
    server.enqueue(Reply(tool_calls=[ToolCallSpec("ping", {"x": 1})]), Reply(text="pong"),
                   Reply(text="ok", usage=(6_000, 1)))
    r = laca("--sandbox", "off", "--model", "fake-gpt", "doctor", cwd=workspace, env=env)
    assert r.returncode == 0, r.stdout
    for said in ("✓ provider openai", "✓ API key: read from OPENAI_API_KEY", f"✓ address: {server.base_url}",
                 "✓ the server answers", "✓ model fake-gpt is listed", "✓ a tool call makes the round trip",
                 "✓ context window: a 6,000-token prompt arrived whole"):
        assert said in r.stdout
    assert "k" not in r.stdout.split("API key:")[1].split("\n")[0].replace("OPENAI_API_KEY", "")  # never the key


def test_doctor_says_a_local_server_cuts_prompts(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    server._queue.clear()
    server.enqueue(Reply(tool_calls=[ToolCallSpec("ping", {"x": 1})]), Reply(text="pong"),
                   Reply(text="ok", usage=(2_048, 1)))
    r = laca("--sandbox", "off", "--model", "fake-gpt", "doctor", cwd=workspace, env=env)
    assert r.returncode == 1 and "counted 2,048 prompt tokens" in r.stdout and "num_ctx" in r.stdout


def test_doctor_names_a_model_the_server_does_not_list(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    r = laca("--sandbox", "off", "--model", "no-such-model", "doctor", cwd=workspace, env=env)
    assert r.returncode == 1 and "✗ model no-such-model is not listed by the server" in r.stdout
    assert "Traceback" not in r.stderr


def test_one_shot_flags_reach_the_run(workspace: Path, server: FakeOpenAIServer) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}
    server.enqueue(Reply(text="planned"))
    r = laca("--persona", "catalyst", "--model", "fake-gpt-mini", "--permission-mode", "plan", "--sandbox",
             "read-only", "--trust", "--dry-run", "-p", "hi", "--output-format", "stream-json", cwd=workspace, env=env)
    lines = r.stdout.splitlines()
    init, result = json.loads(lines[0]), json.loads(lines[-1])
    assert (init["model"], init["permissionMode"], result["result"]) == ("fake-gpt-mini", "plan", "planned"), r.stderr
    assert "You are **Catalyst**" in json.dumps(server.requests[-1])


def test_continue_short_form_and_fork_session(workspace: Path, server: FakeOpenAIServer, isolated_env: Path) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url, "XDG_DATA_HOME": str(isolated_env / "d")}
    server.enqueue(Reply(text="first"), Reply(text="forked"))
    first = json.loads(laca("-p", "a melon question", "--output-format", "json", cwd=workspace, env=env).stdout)
    forked = json.loads(laca("-c", "--fork-session", "-p", "again", "--output-format", "json", cwd=workspace,
                             env=env).stdout)
    assert forked["result"] == "forked" and forked["session_id"] != first["session_id"]
    assert any("a melon question" in (m.get("content") or "") for m in server.sent_messages())


def test_resume_without_id_lists_sessions(workspace: Path, server: FakeOpenAIServer, isolated_env: Path) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url, "HOME": str(isolated_env),
           "XDG_DATA_HOME": str(isolated_env / "data")}
    server.enqueue(Reply(text="first"))
    laca("-p", "a memorable question", cwd=workspace, env=env)
    r = laca("--resume", cwd=workspace, env=env)
    assert r.returncode == 0 and "a memorable question" in r.stdout
    sid = r.stdout.splitlines()[1].split()[0]
    server.enqueue(Reply(text="resumed"))
    r = laca("--resume", sid, "-p", "again", cwd=workspace, env=env)
    assert r.returncode == 0 and "resumed" in r.stdout
    assert any("a memorable question" in (m.get("content") or "") for m in server.sent_messages())


@pytest.mark.parametrize("damage", ["non-numeric id", "truncated"])
def test_continue_starts_over_a_damaged_undo_record_and_says_so(
        damage: str, workspace: Path, server: FakeOpenAIServer, isolated_env: Path) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url, "XDG_DATA_HOME": str(isolated_env / "d")}
    write = ToolCallSpec("writeFile", {"path": "a.txt", "content": "new\n", "icerc_full_text": "Intent: write"})
    server.enqueue(Reply(text="Writing.", tool_calls=[write]), Reply(text="Written."), Reply(text="Again."))
    (workspace / "a.txt").write_text("old\n")
    first = laca("--permission-mode", "accept-edits", "-p", "write a.txt", cwd=workspace, env=env)
    assert (workspace / "a.txt").read_text() == "new\n", first.stderr
    [info] = (isolated_env / "d").rglob("*.undo/000001/info.json")
    if damage == "truncated":
        info.write_text(info.read_text()[:20])
    else:
        info.write_text(json.dumps({**json.loads(info.read_text()), "id": "not-a-number"}))
    again = laca("-c", "-p", "again", cwd=workspace, env=env)
    assert again.returncode == 0 and "Again." in again.stdout, again.stderr
    assert "An undo record is damaged" in again.stderr and str(info) in again.stderr
    assert "Traceback" not in again.stderr and list(info.parent.parent.glob("000001.damaged-*"))
