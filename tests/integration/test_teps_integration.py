"""A whole turn loop (core + TEPS + adapter + real SDK) against the fake servers, for both wire APIs."""

from __future__ import annotations

from framework_core.core.events import AssistantTextDelta, RetryScheduled, ToolCallFinished
from framework_core.core.history import is_valid
from tests.fakes.script import Fault, Reply, ToolCallSpec
from tests.integration.conftest import Rig


def bash_call(cmd: str, cid: str) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": f"Intent: x\nCommand: {cmd}"}, id=cid)


def last_results(rig: Rig) -> list[dict]:
    """The tool results as the provider received them in the last request: their ids and plain text."""
    body = rig.server.requests[-1]
    if rig.server.wire == "openai":
        return [{"id": m["tool_call_id"], "text": m["content"]} for m in body["messages"] if m["role"] == "tool"]
    out = []
    for m in body["messages"]:
        if isinstance(m["content"], list):
            out += [{"id": b["tool_use_id"], "text": b["content"]} for b in m["content"] if b["type"] == "tool_result"]
    return out


def test_plain_text_turn_streams(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="Hello **there**, friend.", chunk_size=4))
    outcome = rig.agent.run_turn("hi")
    assert outcome.text == "Hello **there**, friend."
    assert len([e for e in rig.events if isinstance(e, AssistantTextDelta)]) > 3
    body = rig.server.requests[-1]
    tools = body["tools"]
    names = [t["function"]["name"] if "function" in t else t["name"] for t in tools]
    assert {"executeBashCommand", "readFile", "writeFile"} <= set(names)
    schema = tools[0]["function"]["parameters"] if "function" in tools[0] else tools[0]["input_schema"]
    assert "icerc_full_text" in schema["required"]
    assert rig.agent.session.usage.context_tokens > 0  # the Anthropic fake counts cache writes apart


def test_y_n_a_in_one_reply(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="Three steps.", tool_calls=[
        bash_call("touch one.txt", "c1"), bash_call("touch two.txt", "c2"), bash_call("touch three.txt", "c3")]),
        Reply(text="done"))
    rig.approver.push("y", "n", "a")
    rig.agent.run_turn("do it")
    assert (rig.workspace / "one.txt").exists() and not (rig.workspace / "two.txt").exists()
    assert (rig.workspace / "three.txt").exists()
    results = last_results(rig)
    assert [r["id"] for r in results] == ["c1", "c2", "c3"]
    assert [r["text"].split(" ")[0] for r in results] == ["ok", "User", "ok"]
    assert results[1]["text"] == "User declined execution."
    assert [(s.index, s.total) for s in rig.approver.seen] == [(1, 3), (2, 3), (3, 3)]
    # 'a' remembered exactly that command: the next identical call runs without a prompt
    rig.server.enqueue(Reply(tool_calls=[bash_call("touch three.txt", "c4")]), Reply(text="ok"))
    rig.agent.run_turn("again")
    assert len(rig.approver.seen) == 3
    assert is_valid(rig.agent.session.messages)


def test_safe_command_runs_without_prompt_and_result_reaches_model(rig: Rig) -> None:
    (rig.workspace / "data.txt").write_text("forty-two\n")
    rig.server.enqueue(Reply(tool_calls=[bash_call("cat data.txt", "r1")]), Reply(text="It says forty-two."))
    outcome = rig.agent.run_turn("what is in data.txt?")
    assert rig.approver.seen == []
    header, output = last_results(rig)[0]["text"].split("\n", 1)
    assert header.startswith("ok · exit 0 · ") and output == "forty-two"  # plain text, as the command printed it
    assert outcome.text == "It says forty-two."


def test_dangerous_blocked_and_model_told(rig: Rig) -> None:
    rig.server.enqueue(Reply(tool_calls=[bash_call("rm -rf ~", "d1")]), Reply(text="understood"))
    rig.agent.run_turn("clean my home")
    res = last_results(rig)[0]
    assert res["text"].startswith("Blocked by policy: ") and "home directory" in res["text"]
    assert rig.approver.seen == []


def test_malformed_tool_arguments_become_an_error_result(rig: Rig) -> None:
    cut = ToolCallSpec("executeBashCommand", {}, id="m1", raw_arguments='{"command": "ls"')
    rig.server.enqueue(Reply(tool_calls=[cut]),
                       Reply(text="sorry"))
    rig.agent.run_turn("list")
    res = last_results(rig)[0]
    assert res["text"].startswith("Error: ") and "JSON" in res["text"]


def test_retry_on_429_with_retry_after_ms_then_success(rig: Rig) -> None:
    rig.server.enqueue(Reply(fault=Fault.http(429, retry_after_ms=50)), Reply(fault=Fault.http(500)),
                       Reply(text="finally"))
    if rig.server.wire == "anthropic":
        rig.server.enqueue(Reply(fault=Fault.http(529)), Reply(text="again"))
    outcome = rig.agent.run_turn("hi")
    retries = [e for e in rig.events if isinstance(e, RetryScheduled)]
    assert outcome.text == "finally" and len(retries) == 2
    assert abs(retries[0].delay_s - 0.05) < 1e-6  # retry-after-ms honoured
    if rig.server.wire == "anthropic":
        assert rig.agent.run_turn("more").text == "again"


def test_stream_cut_before_text_is_retried(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="xx", fault=Fault.drop_mid_stream(after_chunks=1)), Reply(text="second try"))
    assert rig.agent.run_turn("hi").text == "second try"


def test_stream_cut_after_text_keeps_partial_and_history_valid(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="The beginning of a long answer", chunk_size=5,
                             fault=Fault.drop_mid_stream(after_chunks=4)))
    outcome = rig.agent.run_turn("tell me")
    last = rig.agent.session.messages[-1]
    assert last.role == "assistant" and last.meta.get("cut_off") and "[reply cut off]" in last.content
    assert outcome.error is None and outcome.text
    rig.server.enqueue(Reply(text="continuing"))
    assert rig.agent.run_turn("continue").text == "continuing"  # the provider accepts the history


def test_truncated_stream_counts_as_cut(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="partial text here", chunk_size=4, fault=Fault.truncate()))
    rig.agent.run_turn("hi")
    assert rig.agent.session.messages[-1].meta.get("cut_off")


def test_stall_after_the_stream_opened_is_reported_not_retried(rig: Rig) -> None:
    """Silence after the response began may be a model thinking (and billing): no blind retry."""
    rig.server.enqueue(Reply(fault=Fault.stall(2)), Reply(text="never sent"))
    sent = len(rig.server.requests)
    outcome = rig.agent.run_turn("hi")
    assert outcome.error and "stopped arriving" in outcome.error and "request_timeout_s" in outcome.error
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)] and len(rig.server.requests) == sent + 1
    assert is_valid(rig.agent.session.messages)


def test_auth_error_not_retried_clear_message(rig: Rig, monkeypatch) -> None:
    rig.agent.llm.api_key = "wrong-key"
    rig.agent.llm.reset()
    outcome = rig.agent.run_turn("hi")
    assert outcome.error and "authentication failed" in outcome.error and "wrong-key" not in outcome.error
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)]


def test_interrupt_at_approval_answers_every_call_and_next_turn_is_accepted(rig: Rig) -> None:
    class CtrlC:
        seen = 0

        def approve(self, req):
            raise KeyboardInterrupt

    rig.agent.teps.approver = CtrlC()
    rig.server.enqueue(Reply(tool_calls=[bash_call("touch a", "i1"), bash_call("touch b", "i2")]))
    outcome = rig.agent.run_turn("go")
    assert outcome.interrupted
    msgs = rig.agent.session.messages
    assert [m.tool_call_id for m in msgs if m.role == "tool_result"][-2:] == ["i1", "i2"]
    rig.server.enqueue(Reply(text="fine"))
    assert rig.agent.run_turn("next").text == "fine"  # the fake (like the real API) accepted the history
    finished = [e for e in rig.events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 2


def test_esc_at_the_second_of_three_stops_the_turn_and_the_next_request_carries_three_results(rig: Rig) -> None:
    from framework_core.core.events import TurnFinished

    rig.server.enqueue(Reply(tool_calls=[bash_call("touch one.txt", "s1"), bash_call("touch two.txt", "s2"),
                                         bash_call("touch three.txt", "s3")]))
    rig.approver.push("y", "esc")
    asked = len(rig.server.requests)
    outcome = rig.agent.run_turn("three steps")
    assert outcome.stopped and not outcome.interrupted and [e.stopped for e in rig.events
                                                              if isinstance(e, TurnFinished)][-1]
    assert len(rig.server.requests) == asked + 1  # no request after the stop
    assert [s.index for s in rig.approver.seen] == [1, 2]  # the third was never asked
    assert (rig.workspace / "one.txt").exists() and not (rig.workspace / "three.txt").exists()
    rig.server.enqueue(Reply(text="understood"))
    assert rig.agent.run_turn("use a temp folder instead").text == "understood"  # the provider took the history
    results = last_results(rig)[-3:]
    assert [r["id"] for r in results] == ["s1", "s2", "s3"] and results[0]["text"].startswith("ok")
    assert "stopped the turn (Esc)" in results[1]["text"] and "stopped the turn (Esc)" in results[2]["text"]
    assert all(r["text"].startswith("Not run") for r in results[1:])
    assert is_valid(rig.agent.session.messages)


def test_history_with_missing_result_is_rejected_by_fake(rig: Rig) -> None:
    """Our fakes enforce the real APIs' rule, so the repair tests above are meaningful."""
    import httpx2

    if rig.server.wire == "anthropic":
        body = {"model": "m", "max_tokens": 5, "tools": [{"name": "x", "input_schema": {"type": "object"}}],
                "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
            {"role": "user", "content": "no result"}]}
        r = httpx2.post(rig.server.base_url + "/v1/messages", json=body, headers={"x-api-key": "test-key-anthropic"})
    else:
        body = {"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "type": "function",
                                                                    "function": {"name": "x", "arguments": "{}"}}]},
            {"role": "user", "content": "no result"}]}
        r = httpx2.post(rig.server.base_url + "/chat/completions", json=body,
                        headers={"authorization": "Bearer test-key-openai"})
    assert r.status_code == 400 and "t1" in r.text


def test_switch_provider_mid_session_keeps_history_valid(rig: Rig, request) -> None:
    rig.server.enqueue(Reply(tool_calls=[bash_call("ls", "s1")]), Reply(text="listed"))
    rig.agent.run_turn("list files")
    other = "anthropic" if rig.server.wire == "openai" else "openai"
    other_server = request.getfixturevalue(f"{other}_server")
    rig.agent.config.llm_settings[other] = rig.agent.config.llm_settings[rig.server.wire].model_copy(
        update={"type": other, "base_url": other_server.base_url, "api_key_env_var":
                "ANTHROPIC_API_KEY" if other == "anthropic" else "OPENAI_API_KEY"})
    rig.agent.set_provider(other)
    other_server.enqueue(Reply(text="I see the earlier listing."))
    assert rig.agent.run_turn("what did you find?").text == "I see the earlier listing."
    assert len(other_server.requests[-1]["messages"]) >= 4


def test_error_event_mid_stream_before_text_is_retried(rig: Rig) -> None:
    kind, said = (("overloaded_error", "overloaded") if rig.server.wire == "anthropic"
                  else ("rate_limit_exceeded", "rate limited"))
    rig.server.enqueue(Reply(text="x", fault=Fault.sse_error(kind, after_chunks=1)), Reply(text="recovered"))
    assert rig.agent.run_turn("hi").text == "recovered"
    retries = [e for e in rig.events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1 and said in retries[0].reason


def test_error_event_after_text_keeps_partial(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="Half of the answer then", chunk_size=4,
                             fault=Fault.sse_error("overloaded_error", after_chunks=5)))
    outcome = rig.agent.run_turn("hi")
    last = rig.agent.session.messages[-1]
    assert last.meta.get("cut_off") and outcome.text.startswith("Half")
    assert any("cut off" in e.text for e in rig.events if hasattr(e, "text") and isinstance(e.text, str))
    rig.server.enqueue(Reply(text="fine"))
    assert rig.agent.run_turn("continue").text == "fine"


def test_the_status_line_shows_the_sandbox_in_force_at_80_columns(rig) -> None:
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.ui.statusline import status_fragments

    line = "".join(part for _, part in status_fragments(rig.facade.status(), width=80))
    assert ("⛶ sandboxed" in line) == rig.agent.teps.sandbox.active
    rig.agent.teps.sandbox = Sandbox("workspace-write", rig.workspace, bwrap=str(rig.workspace / "no-bwrap"))
    assert "NO SANDBOX" in "".join(part for _, part in status_fragments(rig.facade.status(), width=60))
