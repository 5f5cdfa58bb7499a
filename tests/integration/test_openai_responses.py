"""The Responses API adapter (type: openai-responses) through the real `openai` SDK against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from framework_core.core.events import AssistantReasoningDelta, AssistantTextDelta, RetryScheduled
from framework_core.core.history import is_valid
from framework_core.lial_core import Message
from framework_core.core.session import load_transcript
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Fault, Reply, ToolCallSpec
from tests.integration.conftest import Rig
from tests.integration.provider_rig import provider_rig

KEY = "test-key-openai"


def responses_rig(server: FakeOpenAIServer, workspace: Path, monkeypatch: pytest.MonkeyPatch,
                  model: str = "fake-reasoner", extra: str = "    reasoning_summary: auto\n    max_tokens: 2000\n"
                  ) -> Rig:
    return provider_rig(server, workspace, monkeypatch, api_type="openai-responses", model=model, extra=extra)


@pytest.fixture
def rig(openai_server: FakeOpenAIServer, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    return responses_rig(openai_server, workspace, monkeypatch)


def bash_call(cmd: str, cid: str) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": f"Intent: x\nCommand: {cmd}"}, id=cid)


def post(server: FakeOpenAIServer, body: dict) -> httpx2.Response:
    return httpx2.post(server.base_url + "/responses", json=body, headers={"authorization": f"Bearer {KEY}"})


def test_text_turn_is_stateless_and_counts_cached_tokens(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="Hello **there**, friend.", chunk_size=4, usage=(1200, 30), cached_tokens=1024))
    outcome = rig.agent.run_turn("hi")
    assert outcome.text == "Hello **there**, friend."
    assert len([e for e in rig.events if isinstance(e, AssistantTextDelta)]) > 3
    body = rig.server.requests[-1]
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"] and body["max_output_tokens"] == 2000 and "max_tokens" not in body
    assert {"executeBashCommand", "readFile", "writeFile"} <= {t["name"] for t in body["tools"]}
    usage = rig.agent.session.last_usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (176, 1024, 30)
    assert usage.context_tokens == 1200


def test_tool_round_sends_the_encrypted_reasoning_back_before_its_call(rig: Rig) -> None:
    (rig.workspace / "data.txt").write_text("forty-two\n")
    issued = len(rig.server.responses.issued)
    rig.server.enqueue(Reply(reasoning="The user wants the file; cat it.",
                             tool_calls=[bash_call("cat data.txt", "r1")]),
                       Reply(reasoning="It says forty-two.", text="It says forty-two."))
    outcome = rig.agent.run_turn("what is in data.txt?")
    assert outcome.text == "It says forty-two."
    shown = "".join(e.text for e in rig.events if isinstance(e, AssistantReasoningDelta))
    assert "cat it." in shown and "It says forty-two." in shown
    first_token = rig.server.responses.issued[issued]
    items = rig.server.requests[-1]["input"]
    kinds = [i["type"] for i in items]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    reasoning, call, output = items[1], items[2], items[3]
    assert reasoning["encrypted_content"] == first_token and "id" not in reasoning
    assert call["call_id"] == "r1" and output["call_id"] == "r1" and "forty-two" in output["output"]
    assert not any("id" in i for i in items)  # nothing is stored server-side: no item may name an id
    # reasoning is shown, never kept as reply text
    assert all("cat it." not in m.content for m in rig.agent.session.messages)


def test_reasoning_survives_a_resumed_session(rig: Rig) -> None:
    issued = len(rig.server.responses.issued)
    rig.server.enqueue(Reply(reasoning="think", tool_calls=[bash_call("ls", "l1")]), Reply(text="listed"))
    rig.agent.run_turn("list")
    path = rig.agent.session.transcript.path
    loaded = load_transcript(path)
    with_state = [m for m in loaded.messages if m.provider_state is not None]
    assert with_state
    assert with_state[0].provider_state.items[0]["encrypted_content"] == rig.server.responses.issued[issued]


def test_model_switch_drops_reasoning_items_the_new_model_cannot_read(rig: Rig) -> None:
    rig.server.enqueue(Reply(reasoning="think", tool_calls=[bash_call("ls", "s1")]), Reply(text="listed"))
    rig.agent.run_turn("list")
    rig.agent.set_model("fake-gpt")
    rig.server.enqueue(Reply(text="ok"))
    assert rig.agent.run_turn("again").text == "ok"
    kinds = [i["type"] for i in rig.server.requests[-1]["input"]]
    assert "reasoning" not in kinds and kinds.count("function_call") == 1
    assert is_valid(rig.agent.session.messages)


def test_reasoning_effort_and_extra_body_reach_the_request(openai_server, workspace, monkeypatch) -> None:
    rig = responses_rig(openai_server, workspace, monkeypatch,
                        extra="    reasoning_effort: high\n    extra_body:\n      prompt_cache_key: laca-test\n")
    rig.server.enqueue(Reply(text="ok"))
    assert rig.agent.run_turn("hi").text == "ok"
    body = rig.server.requests[-1]
    assert body["reasoning"] == {"effort": "high"} and body["prompt_cache_key"] == "laca-test"


def test_a_refused_parameter_is_reported_clearly(openai_server, workspace, monkeypatch) -> None:
    rig = responses_rig(openai_server, workspace, monkeypatch, model="fake-gpt", extra="    reasoning_effort: low\n")
    outcome = rig.agent.run_turn("hi")
    assert outcome.error and "reasoning.effort" in outcome.error and "HTTP 400" in outcome.error
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)]


def test_a_model_that_does_not_reason_is_asked_again_without_encrypted_reasoning(openai_server, workspace,
                                                                                  monkeypatch) -> None:
    rig = responses_rig(openai_server, workspace, monkeypatch, model="fake-gpt", extra="")
    rig.server.enqueue(Reply(text="plain"), Reply(text="still plain"))
    assert rig.agent.run_turn("hi").text == "plain"
    assert rig.agent.run_turn("again").text == "still plain"
    assert "include" in rig.server.requests[-3] and "include" not in rig.server.requests[-1]


def test_output_limit_and_cut_tool_call_are_reported_as_length(rig: Rig) -> None:
    adapter = rig.agent.llm.adapter
    rig.server.enqueue(Reply(text="A long answer that", stop="limit"))
    done = list(adapter.stream([Message("user", "hi")], [], ""))[-1]
    assert done.response.stop_reason == "length" and done.response.conversation == "A long answer that"
    rig.server.enqueue(Reply(tool_calls=[bash_call("echo " + "x" * 40, "c1")], stop="limit"))
    done = list(adapter.stream([Message("user", "hi")], [], ""))[-1]
    assert done.response.stop_reason == "length" and done.response.tool_requests[0].parse_error


@pytest.mark.parametrize("code", ["server_error", "rate_limit_exceeded"])
def test_failure_inside_the_stream_before_text_is_retried(rig: Rig, code: str) -> None:
    rig.server.enqueue(Reply(text="x", fault=Fault.sse_error(code, after_chunks=2)), Reply(text="recovered"))
    assert rig.agent.run_turn("hi").text == "recovered"
    assert len([e for e in rig.events if isinstance(e, RetryScheduled)]) == 1


def test_failure_after_text_keeps_the_partial_reply(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="Half of the answer then more", chunk_size=4,
                             fault=Fault.sse_error("server_error", after_chunks=9)))
    outcome = rig.agent.run_turn("hi")
    assert rig.agent.session.messages[-1].meta.get("cut_off") and outcome.text.startswith("Half")
    rig.server.enqueue(Reply(text="fine"))
    assert rig.agent.run_turn("continue").text == "fine"


def test_stream_without_its_final_event_counts_as_cut(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="partial text here", chunk_size=4, fault=Fault.truncate()))
    rig.agent.run_turn("hi")
    assert rig.agent.session.messages[-1].meta.get("cut_off")


def test_switch_to_chat_and_anthropic_keeps_the_history_valid(rig: Rig, anthropic_server) -> None:
    rig.server.enqueue(Reply(reasoning="r", tool_calls=[bash_call("ls", "w1")]), Reply(text="listed"))
    rig.agent.run_turn("list files")
    settings = rig.agent.config.llm_settings
    settings["chat"] = settings["p"].model_copy(update={"type": "openai", "model": "fake-gpt"})
    settings["claude"] = settings["p"].model_copy(update={"type": "anthropic", "model": "fake-claude",
                                                            "base_url": anthropic_server.base_url,
                                                            "api_key_env_var": "ANTHROPIC_API_KEY"})
    monkey_key = {"ANTHROPIC_API_KEY": "test-key-anthropic"}
    rig.agent.llm.env = {**rig.agent.llm.env, **monkey_key}
    rig.agent.set_provider("chat")
    rig.server.enqueue(Reply(text="chat sees it"))
    assert rig.agent.run_turn("what did you find?").text == "chat sees it"
    rig.agent.set_provider("claude")
    anthropic_server.enqueue(Reply(text="claude sees it"))
    assert rig.agent.run_turn("and now?").text == "claude sees it"
    rig.agent.set_provider("p")
    rig.server.enqueue(Reply(text="back"))
    assert rig.agent.run_turn("back again").text == "back"


# ---- the fake's own rules, so that the tests above mean something -----------------------------------

def test_fake_rejects_what_the_real_api_rejects(openai_server: FakeOpenAIServer) -> None:
    base = {"model": "fake-reasoner", "store": False}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    call = {"type": "function_call", "call_id": "c1", "name": "x", "arguments": "{}"}
    cases = [
        ({**base, "input": "hi", "max_tokens": 10}, 400, "moved to 'max_output_tokens'"),
        ({**base, "input": "hi", "temperature": 0.2}, 400, "'temperature' is not supported with this model"),
        ({**base, "model": "fake-gpt", "input": "hi", "reasoning": {"effort": "low"}}, 400, "reasoning.effort"),
        ({**base, "model": "o4-mini", "input": "hi"}, 400, "does not exist"),
        ({**base, "input": [user, dict(call, id="fc_1")]}, 404, "Items are not persisted when `store` is set to false"),
        ({**base, "input": [user, call]}, 400, "No tool output found for function call c1"),
        ({**base, "input": [user, {"type": "function_call_output", "call_id": "c9", "output": "x"}]}, 400,
         "No tool call found for function call output with call_id c9"),
        ({**base, "input": [user, {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAforged.00"}]}, 400,
         "could not be verified"),
        ({**base, "input": [user, {"type": "message", "role": "assistant",
                                   "content": [{"type": "input_text", "text": "x"}]}]}, 400, "'output_text'"),
        ({**base, "input": "hi", "tools": [{"type": "function", "function": {"name": "x"}}]}, 400, "tools[0].name"),
    ]
    for body, status, words in cases:
        r = post(openai_server, body)
        assert (r.status_code, words in r.text) == (status, True), (body, r.text)


def test_fake_reasoning_needs_include_to_come_back_encrypted(openai_server: FakeOpenAIServer) -> None:
    openai_server.enqueue(Reply(text="ok"))
    r = post(openai_server, {"model": "fake-reasoner", "input": "hi", "store": False})
    reasoning = json.loads(r.text)["output"][0]
    assert reasoning["type"] == "reasoning" and "encrypted_content" not in reasoning


def test_a_refusal_is_shown_as_the_reply_and_reported(rig: Rig) -> None:
    rig.server.enqueue(Reply(text="I can't help with that.", stop="refusal"))
    done = list(rig.agent.llm.adapter.stream([Message("user", "hi")], [], ""))[-1]
    assert (done.response.stop_reason, done.response.conversation) == ("refusal", "I can't help with that.")


def test_keepalives_carry_a_silence_longer_than_the_idle_timeout(rig: Rig) -> None:
    thinking = Fault("silence", seconds=1.6)
    thinking.ping_every = 0.3  # SSE comments, as proxies and servers send to keep a connection open
    rig.server.enqueue(Reply(text="after thinking", fault=thinking))
    assert rig.agent.run_turn("hi").text == "after thinking"
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)]
