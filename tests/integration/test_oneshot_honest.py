"""`-p` tells the truth about failures: retries on stderr, a cut reply is not a success, errors named by type."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Fault, Reply

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def openai_fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture(scope="module")
def anthropic_fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as s:
        yield s


def laca(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    full.update(env)
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=60)


def fast_retries(workspace: Path) -> None:
    (workspace / "framework_config.yaml").write_text("retry:\n  initial_delay_s: 0.05\n  max_attempts: 3\n")


def test_retries_are_printed_on_stderr(workspace: Path, openai_fake: FakeOpenAIServer) -> None:
    fast_retries(workspace)
    openai_fake.enqueue(Reply(fault=Fault.http(503)), Reply(text="answer after a retry"))
    r = laca("-p", "hi", cwd=workspace, env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_fake.base_url})
    assert r.returncode == 0 and "answer after a retry" in r.stdout
    assert "retrying in" in r.stderr and "attempt 2 of 3" in r.stderr and "503" in r.stderr


def test_a_reply_cut_after_text_exits_non_zero(workspace: Path, openai_fake: FakeOpenAIServer) -> None:
    openai_fake.enqueue(Reply(text="The first half of a long answer, then the line drops", chunk_size=10,
                              fault=Fault.drop_mid_stream(after_chunks=10)))
    r = laca("-p", "tell me", "--output-format", "json", cwd=workspace,
             env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_fake.base_url})
    assert r.returncode == 1, r.stderr
    assert '"cut_off": true' in r.stdout and "cut off" in r.stderr


def test_in_stream_error_is_named_by_its_type(workspace: Path, anthropic_fake: FakeAnthropicServer) -> None:
    anthropic_fake.enqueue(Reply(text="x", fault=Fault.sse_error("invalid_request_error", after_chunks=0)))
    r = laca("--provider", "anthropic", "-p", "hi", cwd=workspace,
             env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": anthropic_fake.base_url})
    assert r.returncode == 1
    assert "invalid_request_error" in r.stderr and "HTTP 200" not in r.stderr and "Traceback" not in r.stderr


def test_a_call_declined_for_want_of_approval_exits_3_and_still_prints_the_answer(
        workspace: Path, openai_fake: FakeOpenAIServer) -> None:
    import json
    import uuid

    from tests.fakes.script import ToolCallSpec

    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_fake.base_url}
    openai_fake.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
        "command": "touch x", "icerc_full_text": "Command: touch x"})]), Reply(text="Declined, fine."))
    r = laca("-p", "make x", "--output-format", "json", cwd=workspace, env=env)
    out = json.loads(r.stdout)
    assert (r.returncode, out["result"], out["permission_denials"][0]["tool_input"]["command"]) == (
        3, "Declined, fine.", "touch x")
    assert str(uuid.UUID(out["session_id"])) == out["session_id"] and out["uuid"]
    assert out["modelUsage"][out["model"]]["outputTokens"] > 0
    openai_fake.enqueue(Reply(text="resumed"))
    again = laca("--resume", out["session_id"], "-p", "and now?", cwd=workspace, env=env)
    assert again.returncode == 0 and "resumed" in again.stdout
    assert any(m.get("content") == "make x" for m in openai_fake.sent_messages())


def test_a_turn_stopped_by_the_tool_round_limit_exits_4(workspace: Path, openai_fake: FakeOpenAIServer) -> None:
    from framework_core.core.agent import MAX_STEPS_PER_TURN
    from tests.fakes.script import ToolCallSpec

    openai_fake._queue.clear()
    openai_fake.enqueue(*[Reply(tool_calls=[ToolCallSpec("executeBashCommand", {  # each call differs: no loop guard
        "command": f"true {n}", "icerc_full_text": "Command: true"})]) for n in range(MAX_STEPS_PER_TURN)])
    r = laca("-p", "loop", cwd=workspace, env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_fake.base_url})
    assert r.returncode == 4 and f"Stopped after {MAX_STEPS_PER_TURN} tool rounds" in r.stderr
