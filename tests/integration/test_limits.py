"""Limits on both wires: a tool call cut by the output limit, quota errors, compaction inside a long tool loop
(in the loop and in `-p`), all against fakes that enforce the APIs' rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from framework_core.core.events import Notice, RetryScheduled, ToolCallFinished
from framework_core.core.history import is_valid
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.script import Fault, Reply, ToolCallSpec
from tests.integration.conftest import Rig

ROOT = Path(__file__).resolve().parents[2]


def read(path: str, n: int | None = None) -> ToolCallSpec:
    """A read; with `n`, each round's call differs (a larger line limit), so the loop guard lets it run."""
    args = {"path": path, "icerc_full_text": f"Intent: read\nCommand: read {path}"}
    return ToolCallSpec("readFile", args if n is None else {**args, "limit": 10_000 + n})


def notices(rig: Rig) -> str:
    return "\n".join(e.text for e in rig.events if isinstance(e, Notice))


def test_a_tool_call_cut_by_the_output_limit_is_not_run_and_the_model_is_told(rig: Rig) -> None:
    (rig.workspace / "ok.txt").write_text("fine\n")
    write = ToolCallSpec("writeFile", {"path": "cut.txt", "content": "y" * 300, "icerc_full_text": "Intent: write"})
    rig.server.enqueue(Reply(text="Reading, then writing.", tool_calls=[read("ok.txt"), write], stop="limit"),
                       Reply(text="Understood, smaller pieces."))
    outcome = rig.agent.run_turn("do both")
    assert outcome.text == "Understood, smaller pieces." and not (rig.workspace / "cut.txt").exists()
    ran = [e.request.tool_name for e in rig.events if isinstance(e, ToolCallFinished)]
    assert ran == ["readFile"]  # the complete call ran; the cut one did not
    last = rig.agent.session.messages[-2]
    assert last.role == "tool_result" and "Not run" in last.content and "output limit" in last.content
    assert "while writing a tool call" in notices(rig) and is_valid(rig.agent.session.messages)


def test_an_exhausted_quota_is_reported_and_not_retried(rig: Rig) -> None:
    rig.server.enqueue(Reply(fault=Fault.http(429, error_type="insufficient_quota",
                                              message="You exceeded your current quota, please check your plan.")),
                       Reply(text="never"))
    sent = len(rig.server.requests)
    outcome = rig.agent.run_turn("hi")
    assert outcome.error and "quota or credit is used up" in outcome.error and "not retried" in outcome.error
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)] and len(rig.server.requests) == sent + 1
    rig.server._queue.clear()


BIG = ("0123456789" * 6 + "\n") * 140  # ~8,500 characters: under the default per-result budget
ROUNDS = 16  # ~2,200 tokens each: a 30,000-token window passes its trigger after about ten


def test_a_long_tool_loop_is_compacted_between_rounds(rig: Rig) -> None:
    (rig.workspace / "big.txt").write_text(BIG)
    rig.agent.provider.max_tokens = 500
    rig.agent.provider.context_window = 30_000
    rig.server.enqueue(*[Reply(tool_calls=[read("big.txt", n)]) for n in range(ROUNDS)], Reply(text="Read it often."))
    outcome = rig.agent.run_turn("read big.txt many times")
    assert outcome.text == "Read it often." and outcome.error is None
    assert "Compacted: trimmed" in notices(rig)
    assert "old tool output trimmed" in json.dumps(rig.server.requests[-1])
    assert is_valid(rig.agent.session.messages)


def test_oneshot_compacts_inside_its_tool_loop_too(workspace: Path) -> None:
    """`-p` runs the same loop: the compaction trigger fires between tool rounds there as well."""
    (workspace / "big.txt").write_text(BIG)
    with FakeAnthropicServer() as server:
        (workspace / "framework_config.yaml").write_text(
            "llm_provider: claude\nllm_settings:\n  claude:\n    type: anthropic\n    model: claude-sonnet-5-5\n"
            f"    base_url: {server.base_url}\n    api_key_env_var: ANTHROPIC_API_KEY\n    max_tokens: 500\n"
            "    context_window: 30000\n")
        server.enqueue(*[Reply(tool_calls=[read("big.txt", n)]) for n in range(ROUNDS)], Reply(text="Many reads done."))
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        env["ANTHROPIC_API_KEY"] = "k"
        r = subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "-p", "read it many times"],
                           cwd=workspace, env=env, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    assert "Many reads done." in r.stdout and "Compacted: trimmed" in r.stderr


def test_a_context_length_error_compacts_and_sends_once_more_on_both_wires(rig: Rig) -> None:
    for i in range(3):
        rig.server.enqueue(Reply(text=f"answer {i}"))
        rig.agent.run_turn(f"question {i}")
    too_long = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."
    rig.server.enqueue(Reply(fault=Fault.http(400, error_type="context_length_exceeded", message=too_long)),
                       Reply(text="SUMMARY: three questions."), Reply(text="fits now"))
    outcome = rig.agent.run_turn("question 3")
    assert outcome.text == "fits now" and outcome.error is None
    assert "no longer fits the model's context window (the API answered HTTP 400)" in notices(rig)
    assert rig.agent.session.messages[0].meta.get("summary") and is_valid(rig.agent.session.messages)


def test_a_second_context_length_error_is_reported_not_looped(rig: Rig) -> None:
    for i in range(3):
        rig.server.enqueue(Reply(text=f"answer {i}"))
        rig.agent.run_turn(f"question {i}")
    fault = Fault.http(400, error_type="context_length_exceeded", message="prompt is too long: 9 tokens > 5 maximum")
    rig.server.enqueue(Reply(fault=fault), Reply(text="SUMMARY."), Reply(fault=fault), Reply(text="never"))
    outcome = rig.agent.run_turn("question 3")
    assert outcome.error and "too long for the model's context window" in outcome.error
    assert is_valid(rig.agent.session.messages)
    rig.server._queue.clear()


def test_tool_call_ids_other_apis_made_are_accepted_and_paired(rig: Rig) -> None:
    """Ids as other servers write them (dots and colons, over 64 characters, one id twice) become valid for
    the API in use, and each result still answers its own call."""
    from framework_core.lial_core import Message, ToolRequest, ToolResult

    ids = ["functions.readFile:0", "functions.readFile:0", "toolu_" + "x" * 70]  # over both APIs' limits
    calls = [ToolRequest(cid, "readFile", {"path": f"f{n}"}) for n, cid in enumerate(ids)]
    session = rig.agent.session
    session.add_user("read three files")
    session.add(Message("assistant", "", tool_calls=calls))
    for n, call in enumerate(calls):
        session.add(Message.tool_result(ToolResult(call.request_id, "readFile", "success", {"n": n})))
    session.add(Message("assistant", "Read them."))
    rig.server.enqueue(Reply(text="I remember all three."))
    assert rig.agent.run_turn("what did you read?").text == "I remember all three."
    body = json.dumps(rig.server.requests[-1])
    assert "functions.readFile:0" not in body and "x" * 70 not in body


# ---- the warm-up ---------------------------------------------------------------------------------------------

def test_the_warm_up_builds_the_sdk_client_before_the_first_message(rig) -> None:
    rig.agent.warm_up().join(10)
    assert rig.agent.llm.built is not None and rig.agent.llm.built._client is not None  # the SDK is imported


def test_the_tools_warm_up_without_the_provider(rig) -> None:
    """At an idle prompt only the tools get ready (validators compiled); the SDK waits for the first key."""
    specs = rig.agent.teps.registry.all()
    rig.agent.warm_up(provider=False).join(10)
    assert all("validator" in spec.__dict__ for spec in specs)
    assert rig.agent.llm.built is None


def test_tool_definitions_that_leave_no_room_are_said_once_with_what_to_change(rig) -> None:
    rig.agent.config.llm_settings[rig.agent.provider_name].context_window = 1_500
    for text in ("one", "two"):
        rig.server.enqueue(Reply(text="ok"))
        rig.agent.run_turn(text)
    said = [e.text for e in rig.events if isinstance(e, Notice) and "tool definitions take about" in e.text]
    assert len(said) == 1 and "use a model with a larger window (/model)" in said[0]


def test_tool_definitions_are_not_mentioned_when_the_window_has_room(rig) -> None:
    rig.server.enqueue(Reply(text="ok"))
    rig.agent.run_turn("hi")
    assert "tool definitions take about" not in notices(rig)
