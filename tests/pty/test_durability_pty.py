"""Kills, second processes and unwritable disks, as a user meets them in a real terminal."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.fakes.script import Reply, ToolCallSpec
from tests.waiting import alive, cmdline, descendants, wait_for, wait_until

PROMPT = "forge>"
ROOT = Path(__file__).resolve().parents[2]


def bash_call(cmd: str, cid: str) -> ToolCallSpec:
    args = {"command": cmd, "icerc_full_text": f"Intent: test\nCommand: {cmd}"}
    return ToolCallSpec("executeBashCommand", args, id=cid)


def approve(child: pexpect.spawn, marker: str) -> None:
    child.expect_exact(marker)
    child.expect_exact("Allow?")  # the question is drawn: it reads the keys from here on
    child.send("y\r")


def in_workspace(workspace: Path) -> list[int]:
    """Live processes working in `workspace` or naming it (a sandbox's bwrap), wherever they were reparented:
    what a killed LACA could have left behind, found even if it started after the kill."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():  # the test itself works there too
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if (cwd == str(workspace) or str(workspace) in cmdline(int(entry.name))) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def tool_results(messages: list[dict]) -> dict[str, str]:
    """What the model read for each call (as text, whatever the result format)."""
    return {m["tool_call_id"]: m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in messages if m["role"] == "tool"}


def test_kill_9_mid_batch_then_continue_keeps_finished_results(spawn, fake_openai, workspace: Path) -> None:
    fake_openai.enqueue(Reply(text="Three steps.", tool_calls=[
        bash_call("touch f1", "c1"), bash_call("touch f2; sleep 317.25", "c2"), bash_call("touch f3", "c3")]))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("make three files")
    approve(child, "call 1 of 3")
    approve(child, "call 2 of 3")
    # the command runs in the sandbox's overlay: f2 lands only if it finishes. LACA is killed as soon as the
    # command's first process shows, which may be while its sandbox is still being set up: nothing of it may
    # survive, not even a part that starts after the kill
    wait_for(lambda: descendants(child.pid, "sleep 317.25"), 10, "the second command to start")
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    assert wait_until(lambda: not in_workspace(workspace)), \
        f"the running command outlived LACA: {[cmdline(pid)[:200] for pid in in_workspace(workspace)]}"
    assert (workspace / "f1").exists() and not (workspace / "f3").exists()

    again = spawn("--continue")
    again.expect_exact("Resumed session")
    again.expect_exact(PROMPT)
    fake_openai.enqueue(Reply(text="resumed ok"))
    again.sendline("where were we?")
    again.expect_exact("resumed ok")
    again.expect_exact(PROMPT)  # keys typed before the prompt is back wait in it as a draft, unsent
    results = tool_results(fake_openai.sent_messages())
    assert re.search(r"exit(_code)?\W{0,4}0", results["c1"]) and "unknown" not in results["c1"]
    assert "outcome is unknown" in results["c2"] and "not run" in results["c3"]
    again.sendline("/exit")
    again.expect_exact("Session saved")
    again.expect(pexpect.EOF)


def test_two_terminals_on_one_session_refuse_then_fork(spawn, fake_openai, workspace: Path) -> None:
    first = spawn()
    first.expect_exact(PROMPT)
    first.sendline("remember mango")
    first.expect_exact("You said")
    first.expect_exact(PROMPT)
    second = spawn("--continue")
    second.expect_exact(f"is open in LACA process {first.pid}")
    second.expect_exact("Fork it into a new session? [y/N]")
    second.sendline("y")
    second.expect_exact("Forked session")
    second.expect_exact(PROMPT)
    second.sendline("and banana")
    second.expect_exact("You said")
    second.expect_exact(PROMPT)
    first.sendline("and cherry")
    first.expect_exact("You said")
    first.expect_exact(PROMPT)
    sent = [m["content"] for m in fake_openai.sent_messages() if m["role"] == "user"]
    assert sent == ["remember mango", "and cherry"]  # the first session never saw the fork's turn
    for child in (first, second):
        child.sendline("/exit")
        child.expect_exact("Session saved")
        child.expect(pexpect.EOF)


def test_a_second_oneshot_on_an_open_session_is_refused(spawn, fake_openai, workspace: Path) -> None:
    first = spawn()
    first.expect_exact(PROMPT)
    first.sendline("hello there")
    first.expect_exact("You said")
    first.expect_exact(PROMPT)
    env = {**os.environ, "OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "k"}
    run = subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--continue", "-p", "more"],
                         cwd=workspace, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and f"LACA process {first.pid}" in run.stderr and "--fork-session" in run.stderr
    assert "Traceback" not in run.stderr
    forked = subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--continue",
                             "--fork-session", "-p", "more"], cwd=workspace, env=env, capture_output=True, text=True,
                            timeout=60)
    assert forked.returncode == 0 and "Forked session" in forked.stderr
    first.sendline("/exit")
    first.expect(pexpect.EOF)


UNSHARE = shutil.which("unshare")


def mounts_read_only(folder: Path) -> bool:
    """Whether a read-only tmpfs can be mounted on `folder` in a private namespace here (it is gone after)."""
    probe = subprocess.run([str(UNSHARE), "--user", "--map-root-user", "--mount", "sh", "-c",
                            f'mount -t tmpfs -o ro tmpfs "{folder}" && ! touch "{folder}/probe"'],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(UNSHARE is None, reason="needs unshare for a read-only mount in a private namespace")
def test_read_only_data_dir_starts_in_memory_with_one_warning(fake_openai, workspace: Path, isolated_env: Path) -> None:
    data = isolated_env / ".local" / "share" / "laca"
    data.mkdir(parents=True, exist_ok=True)
    if not mounts_read_only(data):
        pytest.skip("a read-only tmpfs cannot be mounted in a private namespace here")
    env = {**os.environ, "OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "k", "TERM": "xterm",
           "LACA_TYPEAHEAD_GUARD_S": "0.3", "PROMPT_TOOLKIT_NO_CPR": "1"}
    script = f'mount -t tmpfs -o ro tmpfs "{data}" && exec "{sys.executable}" "{ROOT / "run_framework.py"}" --no-mcp'
    child = pexpect.spawn(UNSHARE, ["--user", "--map-root-user", "--mount", "sh", "-c", script], cwd=str(workspace),
                          env=env, encoding="utf-8", timeout=20, dimensions=(40, 120))
    child.linesep = "\r"  # Enter, as a terminal sends it
    try:
        child.expect_exact(PROMPT)
        child.sendline("first")
        child.expect_exact("kept in memory only")
        child.expect_exact("You said")
        child.expect_exact(PROMPT)
        child.sendline("second")
        child.expect_exact("You said")
        child.expect_exact(PROMPT)
        child.sendline("/exit")
        child.expect_exact("Session NOT saved")
        child.expect(pexpect.EOF)
        seen = child.before or ""
        assert "Traceback" not in seen and "internal error" not in seen
    finally:
        if child.isalive():
            child.terminate(force=True)
