"""Workspace trust as a user meets it: a trusted workspace whose .mcp.json changes on disk. `laca -p` does not
start the changed server and still answers; the REPL asks about the change, old and new, before starting it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect

from tests.fakes.script import Reply
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def server(marker: str) -> dict:
    # a real MCP server; the shell leaves a marker in the workspace when (and only when) it is started (servers
    # see the workspace read-only unless their entry says `workspace: write`)
    return {"mcpServers": {"clock": {"command": "sh", "workspace": "write", "args": [
        "-c", f"touch {marker}; exec {sys.executable} -m mcp_server_time"]}}}


def oneshot(workspace: Path, fake_openai, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "k"}
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--provider", "openai", *args, "-p", "hi"],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=90)


def test_a_changed_server_waits_for_the_user(spawn, fake_openai, workspace: Path, isolated_env: Path) -> None:
    (isolated_env / ".config" / "laca" / "config.yaml").write_text("")  # the user's config no longer trusts it
    (workspace / ".mcp.json").write_text(json.dumps(server("started-v1")))
    first = oneshot(workspace, fake_openai, "--trust")
    assert first.returncode == 0, first.stderr
    assert wait_until((workspace / "started-v1").exists, 20)  # trusted: it ran

    (workspace / ".mcp.json").write_text(json.dumps(server("started-v2")))
    fake_openai.enqueue(Reply(text="still answering"))
    second = oneshot(workspace, fake_openai)
    assert second.returncode == 0 and "still answering" in second.stdout
    assert "MCP server clock (changed)" in second.stderr and "--trust" in second.stderr
    assert len([line for line in second.stderr.splitlines() if "not trusted" in line]) == 1
    assert not (workspace / "started-v2").exists()

    child = spawn(no_mcp=False)
    child.expect_exact("Trust this workspace?")
    child.expect_exact("Changed since you trusted this workspace")
    child.expect(r"was: clock: runs sh -c touch started-v1")
    child.expect(r"now: clock: runs sh -c touch started-v2")
    child.expect_exact("Use them?")  # the question is drawn: it reads the keys from here on
    assert not (workspace / "started-v2").exists()  # nothing of it runs before the answer
    child.send("n\r")
    child.expect_exact("Starting without them")
    child.expect_exact("forge>")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert not (workspace / "started-v2").exists()
