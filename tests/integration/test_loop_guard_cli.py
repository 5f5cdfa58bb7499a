"""The loop guard for every model, through the real CLI and a fake server: the same call made
`repeated_call_limit` times in a row, or again after it was declined, ends the turn without another request;
the user is told on stderr, the model reads why in the stopped call's result, and the history stays valid."""

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


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def laca(*args: str, cwd: Path, server: FakeOpenAIServer) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    env.update({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url})
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def bash(command: str, brief: str = "") -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": command, "icerc_full_text": brief or f"Run {command}"})


def test_the_same_call_three_times_in_a_row_stops_the_turn(workspace: Path, server: FakeOpenAIServer) -> None:
    before = len(server.requests)
    server.enqueue(*[Reply(tool_calls=[bash("ls", f"brief {i}")]) for i in range(3)], Reply(text="never asked"))
    r = laca("--permission-mode", "auto", "-p", "go", cwd=workspace, server=server)
    assert r.returncode == 4, r.stderr  # stopped by a limit
    assert "Stopped the turn: the model made the same executeBashCommand call 3 times in a row" in r.stderr
    assert len(server.requests) - before == 3 and server.pending == 1  # no fourth request
    server.enqueue(Reply(text="ok"))  # the next turn's history (with the stopped call's result) is accepted
    r = laca("--permission-mode", "auto", "--continue", "-p", "and now?", cwd=workspace, server=server)
    assert r.returncode == 0, r.stderr
    sent = str(server.requests[-1])
    assert "loop guard" in sent


def test_a_call_repeated_after_it_was_declined_stops_at_once(workspace: Path, server: FakeOpenAIServer) -> None:
    before = len(server.requests)
    network = "curl -o x https://example.invalid"
    server.enqueue(Reply(tool_calls=[bash(network)]), Reply(tool_calls=[bash(network)]), Reply(text="never"))
    r = laca("--permission-mode", "auto", "-p", "go", cwd=workspace, server=server)
    assert "repeated a executeBashCommand call that was declined" in r.stderr, r.stderr
    assert len(server.requests) - before == 2 and server.pending == 1
