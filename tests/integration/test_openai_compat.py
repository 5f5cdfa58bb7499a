"""Chat Completions against the fake in each dialect: api.openai.com's rules and compatible servers' habits."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import httpx2
import pytest

from framework_core.core.events import AssistantReasoningDelta, RetryScheduled
from framework_core.core.history import is_valid
from framework_core.lial_core import Message
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Fault, Reply, ToolCallSpec
from tests.integration.conftest import Rig
from tests.integration.provider_rig import provider_rig

KEY = "test-key-openai"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, FakeOpenAIServer]]:
    made = {d: FakeOpenAIServer(api_key=KEY, dialect=d) for d in ("gemini", "vllm", "ollama")}
    yield made
    for server in made.values():
        server.close()


def chat_rig(server: FakeOpenAIServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, model: str = "fake-model",
             extra: str = "") -> Rig:
    return provider_rig(server, workspace, monkeypatch, api_type="openai", model=model, extra=extra)


def bash_call(cmd: str, cid: str | None = None) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": f"Intent: x\nCommand: {cmd}"}, id=cid)


def post(server: FakeOpenAIServer, body: dict) -> httpx2.Response:
    return httpx2.post(server.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {KEY}"})


# ---- Gemini: calls without index, finish_reason "stop", thought signatures ------------------------------

def test_gemini_indexless_calls_stay_apart_and_signatures_go_back(servers, workspace, monkeypatch) -> None:
    rig = chat_rig(servers["gemini"], workspace, monkeypatch, model="gemini-3.6-flash")
    (workspace / "a.txt").write_text("A\n")
    (workspace / "b.txt").write_text("B\n")
    rig.server.enqueue(Reply(tool_calls=[bash_call("cat a.txt", "g1"), bash_call("cat b.txt", "g2")]),
                       Reply(text="A and B."))
    outcome = rig.agent.run_turn("read both")
    assert outcome.text == "A and B." and outcome.error is None
    assert [r.data["stdout"] for r in outcome.tool_results] == ["A\n", "B\n"]
    sent = [m for m in rig.server.requests[-1]["messages"] if m.get("tool_calls")][0]["tool_calls"]
    assert [c["extra_content"]["google"]["thought_signature"] for c in sent] == [
        rig.server.signatures["g1"], rig.server.signatures["g2"]]
    rig.server.enqueue(Reply(text="still fine"))
    assert rig.agent.run_turn("and now?").text == "still fine"  # a later turn still carries them


def test_gemini_calls_without_ids_get_unique_ones(servers, workspace, monkeypatch) -> None:
    rig = chat_rig(servers["gemini"], workspace, monkeypatch, model="gemini-3.6-flash")
    rig.server.enqueue(Reply(tool_calls=[bash_call("true"), bash_call("true")]), Reply(text="done"))
    outcome = rig.agent.run_turn("twice")
    ids = [r.request_id for r in outcome.tool_results]
    assert len(set(ids)) == 2 and outcome.text == "done"


def test_gemini_rejects_a_call_without_its_signature(servers) -> None:
    server = servers["gemini"]
    server.signatures["s1"] = "U0lH"
    body = {"model": "gemini-3.6-flash", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "s1", "type": "function",
                                                             "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "s1", "content": "ok"}]}
    r = post(server, body)
    assert r.status_code == 400 and "thought_signature" in r.text


# ---- reasoning shown apart: reasoning_content (vLLM) and <think> (Ollama) --------------------------------

@pytest.mark.parametrize("dialect", ["vllm", "ollama"])
def test_reasoning_is_shown_dim_and_kept_out_of_the_history(servers, workspace, monkeypatch, dialect: str) -> None:
    rig = chat_rig(servers[dialect], workspace, monkeypatch)
    rig.server.enqueue(Reply(reasoning="First I consider the question.", text="The answer is 4.", chunk_size=5),
                       Reply(text="ok"))
    outcome = rig.agent.run_turn("2+2?")
    assert outcome.text == "The answer is 4."
    shown = "".join(e.text for e in rig.events if isinstance(e, AssistantReasoningDelta))
    assert shown.strip() == "First I consider the question."
    rig.agent.run_turn("thanks")
    sent = [m for m in rig.server.requests[-1]["messages"] if m["role"] == "assistant"]
    assert sent == [{"role": "assistant", "content": "The answer is 4."}]


def test_strict_template_needs_alternation_and_string_content(servers, workspace, monkeypatch) -> None:
    rig = chat_rig(servers["vllm"], workspace, monkeypatch)
    rig.server.enqueue(Reply(fault=Fault.http(401)))
    assert rig.agent.run_turn("first").error  # no reply: the history now ends with a user message
    rig.server.enqueue(Reply(text="never sent"))
    outcome = rig.agent.run_turn("second")
    assert outcome.error and "roles must alternate" in outcome.error
    rig.agent.provider.merge_user_messages = True
    rig.agent.llm.reset()
    rig.server._queue.clear()
    rig.server.enqueue(Reply(tool_calls=[bash_call("true", "v1")]), Reply(text="merged"))
    assert rig.agent.run_turn("third").text == "merged"  # and the tool call's content went as ""
    users = [m["content"] for m in rig.server.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == "first\n\nsecond\n\nthird"


# ---- api.openai.com's rules, met by the profiles ----------------------------------------------------------

def test_reasoning_model_gets_max_completion_tokens_and_no_temperature(openai_server, workspace, monkeypatch) -> None:
    rig = chat_rig(openai_server, workspace, monkeypatch, model="gpt-6.2-sol", extra="    temperature: 0.2\n")
    rig.server.enqueue(Reply(text="fine", usage=(3000, 20), cached_tokens=2048))
    assert rig.agent.run_turn("hi").text == "fine"
    body = rig.server.requests[-1]
    assert "max_completion_tokens" in body and "max_tokens" not in body and "temperature" not in body
    usage = rig.agent.session.last_usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (952, 2048)


def test_refusals_of_the_api_read_clearly(openai_server, workspace, monkeypatch) -> None:
    rig = chat_rig(openai_server, workspace, monkeypatch, model="gpt-6.2-sol",
                   extra="    token_parameter: max_tokens\n    max_tokens: 1000\n")
    outcome = rig.agent.run_turn("hi")
    assert outcome.error and "max_completion_tokens" in outcome.error and "HTTP 400" in outcome.error
    rig = chat_rig(openai_server, workspace, monkeypatch, model="gpt-4-nonexistent")
    outcome = rig.agent.run_turn("hi")
    assert outcome.error and "HTTP 404" in outcome.error and "model" in outcome.error
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)]


def test_length_stop_and_cut_call_are_reported(openai_server, workspace, monkeypatch) -> None:
    rig = chat_rig(openai_server, workspace, monkeypatch)
    rig.server.enqueue(Reply(text="cut here", stop="limit"))
    done = list(rig.agent.llm.adapter.stream([Message("user", "hi")], [], ""))[-1]
    assert (done.response.stop_reason, done.response.conversation) == ("length", "cut here")
    rig.server.enqueue(Reply(tool_calls=[bash_call("echo " + "x" * 30, "k1")], stop="limit"))
    done = list(rig.agent.llm.adapter.stream([Message("user", "hi")], [], ""))[-1]
    assert done.response.stop_reason == "length" and done.response.tool_requests[0].parse_error
    assert is_valid(rig.agent.session.messages)


def test_fake_chat_rules(openai_server: FakeOpenAIServer) -> None:
    def call(cid: str) -> dict:
        return {"id": cid, "type": "function", "function": {"name": "x", "arguments": "{}"}}

    user = {"role": "user", "content": "hi"}
    turn = [user, {"role": "assistant", "content": "", "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    cases = [
        ({"model": "nope", "messages": [user]}, 404, "does not exist"),
        ({"model": "o4-mini", "messages": [user]}, 404, "does not exist"),
        ({"model": "fake-reasoner", "messages": [user], "max_tokens": 5}, 400, "Use 'max_completion_tokens'"),
        ({"model": "fake-reasoner", "messages": [user], "temperature": 0.2}, 400, "Only the default (1)"),
        ({"model": "fake-gpt", "messages": [user], "reasoning_effort": "low"}, 400, "reasoning_effort"),
        ({"model": "fake-gpt", "messages": turn + turn[1:]}, 400, "Duplicate value for 'tool_call_id' of c1"),
        ({"model": "fake-gpt", "messages": [user, {"role": "assistant", "content": "", "tool_calls": [call("")]}]},
         400, "empty string"),
        ({"model": "fake-gpt", "messages": [user, {"role": "assistant", "content": "",
                                                   "tool_calls": [call("x" * 41)]}]}, 400, "maximum length 40"),
        ({"model": "fake-gpt", "messages": [user, {"role": "tool", "tool_call_id": "c9", "content": "x"}]}, 400,
         "must be a response to a preceeding message"),
        ({"model": "fake-gpt", "messages": [user, {"role": "assistant", "content": None}]}, 400, "got null"),
    ]
    for body, status, words in cases:
        r = post(openai_server, body)
        assert (r.status_code, words in r.text) == (status, True), (body, r.text)


def test_a_refusal_is_shown_as_the_reply_and_reported(openai_server, workspace, monkeypatch) -> None:
    rig = chat_rig(openai_server, workspace, monkeypatch)
    rig.server.enqueue(Reply(text="I can't help with that.", stop="refusal"))
    outcome = rig.agent.run_turn("hi")
    assert outcome.text == "I can't help with that."
    rig.server.enqueue(Reply(text="I can't help with that.", stop="refusal"))
    done = list(rig.agent.llm.adapter.stream([Message("user", "hi")], [], ""))[-1]
    assert done.response.stop_reason == "refusal"


def test_silence_before_the_first_token_is_waited_out(openai_server, workspace, monkeypatch) -> None:
    rig = chat_rig(openai_server, workspace, monkeypatch)
    rig.server.enqueue(Reply(text="after a pause", fault=Fault("silence", seconds=0.4)))
    assert rig.agent.run_turn("hi").text == "after a pause"
    assert not [e for e in rig.events if isinstance(e, RetryScheduled)]
