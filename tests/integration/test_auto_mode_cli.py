"""`-p --permission-mode auto`: what would ask runs in the sandbox without a question, said on stderr with its
/undo; what needs the network is still declined (no one to ask)."""

from __future__ import annotations

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


def laca(*args: str, cwd: Path, server: FakeOpenAIServer) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    env.update({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url})
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def bash(command: str) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": command, "icerc_full_text": f"Command: {command}"})


def test_oneshot_auto_runs_local_commands_and_declines_network_ones(workspace: Path, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(tool_calls=[bash("echo hi > made.txt")]),
                   Reply(tool_calls=[bash("curl -o x https://example.invalid")]), Reply(text="done"))
    r = laca("--permission-mode", "auto", "-p", "go", cwd=workspace, server=server)
    assert r.returncode == 3, r.stderr  # the network call was declined for want of an approval
    assert (workspace / "made.txt").read_text() == "hi\n"
    assert "laca: auto · sandboxed · /undo 1: echo hi > made.txt" in r.stderr
    assert "declined executeBashCommand" in r.stderr and "curl" in r.stderr
    assert "done" in r.stdout


def test_oneshot_ask_mode_still_declines_what_auto_would_run(workspace: Path, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(tool_calls=[bash("echo hi > made.txt")]), Reply(text="done"))
    r = laca("-p", "go", cwd=workspace, server=server)
    assert r.returncode == 3 and "declined executeBashCommand" in r.stderr
    assert not (workspace / "made.txt").exists()


def test_oneshot_auto_does_not_land_a_pth_or_a_folder_open_task_and_exits_3(workspace: Path,
                                                                            server: FakeOpenAIServer) -> None:
    (workspace / "update.sh").write_text("mkdir -p .venv/lib/site-packages .vscode\n"
                                         "echo 'import os' > .venv/lib/site-packages/zz.pth\n"
                                         "echo '{}' > .vscode/tasks.json\necho x > notes.txt\n")
    (workspace / ".venv").mkdir()
    (workspace / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    server.enqueue(Reply(tool_calls=[bash("sh update.sh")]), Reply(text="done"))
    r = laca("--permission-mode", "auto", "-p", "go", cwd=workspace, server=server)
    assert r.returncode == 3, r.stderr
    assert "laca: held (auto mode" in r.stderr and "zz.pth" in r.stderr and ".vscode/tasks.json" in r.stderr
    assert not (workspace / ".venv/lib/site-packages/zz.pth").exists() and not (workspace / "notes.txt").exists()
    sent = str(server.sent_messages(len(server.requests) - 1))
    assert "held by auto mode" in sent and "Python runs its import lines" in sent
