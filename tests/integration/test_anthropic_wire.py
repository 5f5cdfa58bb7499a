"""The Anthropic wire end to end (core + adapter + the official SDK) against the fake that enforces the
Messages API's rules: thinking kept and sent back signed, prompt caching, stops, limits, ids, errors."""

from __future__ import annotations

import json
from itertools import pairwise

import httpx2
import pytest

from framework_core.core.events import (AssistantMessageDone, AssistantReasoningDelta, Notice, RetryScheduled,
                                        ToolCallFinished)
from framework_core.core.history import is_valid
from framework_core.lial_core import Message, ToolRequest, ToolResult
from framework_core.core.limits import REFUSED_TEXT
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.script import Fault, Reply, ToolCallSpec
from tests.integration.conftest import Rig, make_rig

KEY = {"x-api-key": "test-key-anthropic"}


@pytest.fixture
def claude(request: pytest.FixtureRequest, workspace, monkeypatch) -> Rig:
    rig = make_rig("anthropic", request, workspace, monkeypatch)
    rig.server.reset()
    rig.agent.set_model("claude-sonnet-5-5")
    return rig


def bash(cmd: str, cid: str | None = None) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": f"Intent: x\nCommand: {cmd}"}, id=cid)


def assistant_blocks(body: dict) -> list[list[dict]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def notices(rig: Rig) -> str:
    return "\n".join(e.text for e in rig.events if isinstance(e, Notice))


def post(server: FakeAnthropicServer, body: dict) -> httpx2.Response:
    return httpx2.post(server.base_url + "/v1/messages", json=body, headers=KEY)


# ---- thinking ------------------------------------------------------------------------------------------

def test_thinking_is_shown_apart_and_sent_back_signed_before_the_calls(claude: Rig) -> None:
    claude.server.enqueue(Reply(reasoning="I should list the files first.", text="Listing.",
                                tool_calls=[bash("ls", "t1")]), Reply(text="Done."))
    assert claude.agent.run_turn("what is here?").text == "Done."
    shown = "".join(e.text for e in claude.events if isinstance(e, AssistantReasoningDelta))
    assert shown == "I should list the files first."
    first, second = claude.server.requests[-2:]
    assert first["thinking"] == {"type": "adaptive", "display": "summarized"}
    sent = assistant_blocks(second)[-1]
    assert [b["type"] for b in sent] == ["thinking", "text", "tool_use"]
    assert sent[0]["thinking"] == "I should list the files first." and sent[0]["signature"]
    assert "thinking" not in claude.agent.session.messages[-1].content  # kept apart from the reply text


def test_redacted_thinking_goes_back_unchanged(claude: Rig) -> None:
    claude.server.enqueue(Reply(reasoning="plan", redacted=True, tool_calls=[bash("pwd", "t2")]), Reply(text="ok"))
    assert claude.agent.run_turn("where am I?").text == "ok"
    sent = assistant_blocks(claude.server.requests[-1])[-1]
    assert [b["type"] for b in sent] == ["thinking", "redacted_thinking", "tool_use"] and sent[1]["data"]


def test_a_model_switch_drops_thinking_blocks_whose_signatures_no_longer_apply(claude: Rig) -> None:
    claude.server.enqueue(Reply(reasoning="think", text="Listing.", tool_calls=[bash("ls", "t3")]), Reply(text="Done."))
    claude.agent.run_turn("list")
    old_blocks = assistant_blocks(claude.server.requests[-1])[-1]
    claude.agent.set_model("claude-opus-5")
    claude.server.enqueue(Reply(text="Opus here."))
    assert claude.agent.run_turn("and you?").text == "Opus here."
    sent = [b["type"] for blocks in assistant_blocks(claude.server.requests[-1]) for b in blocks]
    assert "thinking" not in sent and "tool_use" in sent
    # what LACA avoided: another model refuses those signatures
    body = dict(claude.server.requests[-1], stream=False)
    body["messages"][1]["content"] = old_blocks
    assert post(claude.server, body).status_code == 400


def test_the_fake_wants_thinking_back_before_calls_it_made_after_thinking(
        anthropic_server: FakeAnthropicServer) -> None:
    anthropic_server.state.thought_calls.add("toolu_thought")
    use = {"type": "tool_use", "id": "toolu_thought", "name": "x", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_thought", "content": "r"}
    body = {"model": "claude-sonnet-5-5", "max_tokens": 1000,
            "tools": [{"name": "x", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": [use]},
                         {"role": "user", "content": [result]}]}
    r = post(anthropic_server, body)
    assert r.status_code == 400 and "Expected `thinking` or `redacted_thinking`" in r.text
    body["thinking"] = {"type": "disabled"}
    assert post(anthropic_server, body).status_code == 200


def test_budget_thinking_on_a_model_that_takes_a_budget(claude: Rig) -> None:
    claude.agent.provider.thinking = "on"
    claude.agent.set_model("claude-haiku-4-5")
    claude.server.enqueue(Reply(reasoning="short plan", tool_calls=[bash("ls", "t4")]), Reply(text="fine"))
    assert claude.agent.run_turn("go").text == "fine"
    first = claude.server.requests[-2]
    assert first["thinking"]["type"] == "enabled" and 1024 <= first["thinking"]["budget_tokens"] < first["max_tokens"]
    assert assistant_blocks(claude.server.requests[-1])[-1][0]["type"] == "thinking"


# ---- parameters the model refuses ------------------------------------------------------------------------

def test_temperature_is_not_sent_to_a_model_that_refuses_it(claude: Rig) -> None:
    claude.agent.provider.temperature = 0.4
    claude.agent.set_model("claude-sonnet-5-5")
    claude.server.enqueue(Reply(text="fine"))
    assert claude.agent.run_turn("hi").text == "fine"
    assert not {"temperature", "top_p", "top_k"} & set(claude.server.requests[-1])
    assert "temperature is not sent" in notices(claude)
    r = post(claude.server, {"model": "claude-sonnet-5-5", "max_tokens": 10, "temperature": 0.4,
                             "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 400 and "sampling parameters" in r.text


def test_unknown_model_is_named_with_what_to_do(claude: Rig) -> None:
    claude.agent.set_model("claude-nonexistent-9")
    outcome = claude.agent.run_turn("hi")
    assert outcome.error and "404" in outcome.error and "/model" in outcome.error
    assert "No capability profile for model 'claude-nonexistent-9'" in notices(claude)
    assert is_valid(claude.agent.session.messages)


def test_the_fake_enforces_max_tokens_and_tool_id_rules(anthropic_server: FakeAnthropicServer) -> None:
    base = {"model": "fake-claude", "messages": [{"role": "user", "content": "hi"}]}
    assert "max_tokens: Field required" in post(anthropic_server, base).text
    tools = [{"name": "x", "input_schema": {"type": "object"}}]
    for bad_id, wording in (("functions.x:0", "should match pattern"), ("dup", "must be unique")):
        uses = [{"type": "tool_use", "id": bad_id, "name": "x", "input": {}}] * (2 if bad_id == "dup" else 1)
        body = dict(base, max_tokens=5, tools=tools, messages=[
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": uses},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": bad_id, "content": "r"}]}])
        r = post(anthropic_server, body)
        assert r.status_code == 400 and wording in r.text
    text_first = dict(base, max_tokens=5, tools=tools, messages=[
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "note"},
                                     {"type": "tool_result", "tool_use_id": "a", "content": "r"}]}])
    assert "without `tool_result` blocks immediately after" in post(anthropic_server, text_first).text


# ---- caching ---------------------------------------------------------------------------------------------

def _ten_rounds(rig: Rig) -> list:
    rig.server.enqueue(*[Reply(text=f"Round {i}.", tool_calls=[bash(f"echo round {i}")]) for i in range(10)],
                       Reply(text="All ten done."))
    assert rig.agent.run_turn("run ten rounds").text == "All ten done."
    return [e.usage for e in rig.events if isinstance(e, AssistantMessageDone)]


def test_ten_tool_rounds_read_the_unchanged_prefix_from_the_cache(claude: Rig) -> None:
    usages = _ten_rounds(claude)
    assert len(usages) == 11 and usages[0].cache_read_tokens == 0 and usages[0].cache_write_tokens > 1000
    for before, after in pairwise(usages):
        assert after.cache_read_tokens == before.cache_read_tokens + before.cache_write_tokens  # the whole prefix
        assert after.input_tokens < 50 and after.cache_write_tokens < 200  # only the new round is written
    marks = claude.server.requests[-1]
    assert marks["tools"][-1]["cache_control"] == {"type": "ephemeral"} and marks["system"][0]["cache_control"]
    report = claude.agent.usage_report()
    assert "from the cache" in report and "cache reads" in report


def test_without_caching_every_round_bills_the_whole_prefix(claude: Rig) -> None:
    claude.agent.provider.prompt_caching = False
    claude.agent.set_model("claude-sonnet-5-5")
    usages = _ten_rounds(claude)
    assert all(u.cache_read_tokens == 0 and u.cache_write_tokens == 0 for u in usages)
    assert usages[-1].input_tokens > usages[0].input_tokens > 1000


# ---- stops -----------------------------------------------------------------------------------------------

def test_a_reply_cut_by_max_tokens_is_kept_and_the_user_told_what_to_do(claude: Rig) -> None:
    claude.server.enqueue(Reply(text="The first half of a long answer", stop="limit"), Reply(text="the rest"))
    outcome = claude.agent.run_turn("explain")
    assert outcome.text == "The first half of a long answer" and outcome.error is None
    done = [e for e in claude.events if isinstance(e, AssistantMessageDone)][-1]
    assert done.cut_off and done.message.meta["cut_off"] == "output limit"  # shown (and counted by -p) as cut
    assert "cut by the output limit (32,000 tokens)" in notices(claude) and "continue" in notices(claude)
    assert claude.agent.run_turn("continue").text == "the rest"


def test_a_tool_call_cut_by_max_tokens_is_not_run_and_the_model_is_told(claude: Rig) -> None:
    big = ToolCallSpec("writeFile", {"path": "big.txt", "content": "x" * 400, "icerc_full_text": "Intent: write"})
    claude.server.enqueue(Reply(text="Writing it.", tool_calls=[big], stop="limit"),
                          Reply(text="I will write it in parts."))
    outcome = claude.agent.run_turn("write a big file")
    assert outcome.text == "I will write it in parts."
    assert not (claude.workspace / "big.txt").exists()
    assert not [e for e in claude.events if isinstance(e, ToolCallFinished)]
    results = [b for m in claude.server.requests[-1]["messages"]
               if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert "Not run" in results[-1]["content"] and "output limit" in results[-1]["content"]
    assert "while writing a tool call" in notices(claude) and is_valid(claude.agent.session.messages)


def test_a_refusal_is_reported_and_the_refused_text_not_kept(claude: Rig) -> None:
    claude.server.enqueue(Reply(text="I can help with th", stop="refusal"), Reply(text="Sure, that is fine."))
    outcome = claude.agent.run_turn("something risky")
    assert "declined to answer (cyber" in notices(claude)
    assert claude.agent.session.messages[-1].content == REFUSED_TEXT and outcome.error is None
    assert claude.agent.run_turn("something else").text == "Sure, that is fine."


def test_a_paused_turn_is_sent_back_and_goes_on(claude: Rig) -> None:
    claude.server.enqueue(Reply(text="Searching…", stop="pause"), Reply(text="Found it."))
    assert claude.agent.run_turn("find it").text == "Found it."
    assert assistant_blocks(claude.server.requests[-1])[-1] == [{"type": "text", "text": "Searching…"}]


# ---- limits ----------------------------------------------------------------------------------------------

def test_silence_with_keepalive_pings_is_waited_for(claude: Rig) -> None:
    claude.server.enqueue(Reply(text="after a long think", fault=Fault.silence(2.0, ping_every=0.3)))
    assert claude.agent.run_turn("think hard").text == "after a long think"


def test_silence_past_the_idle_timeout_is_reported_and_not_retried(claude: Rig) -> None:
    claude.server.enqueue(Reply(text="too late", fault=Fault.silence(2.5)), Reply(text="not asked for"))
    sent = len(claude.server.requests)
    outcome = claude.agent.run_turn("think")
    assert outcome.error and "no data for 1 s" in outcome.error and "request_timeout_s" in outcome.error
    assert len(claude.server.requests) == sent + 1 and not [e for e in claude.events if isinstance(e, RetryScheduled)]


def test_a_context_length_refusal_compacts_and_retries_once(claude: Rig) -> None:
    claude.agent.set_model("fake-small-context")  # no profile: LACA does not know its 6,000-token window
    for i in range(2):
        claude.server.enqueue(Reply(text=f"{i}" * 10_000))  # ~2,500 tokens each: the third request overflows
        claude.agent.run_turn(f"question {i}")
    claude.server.enqueue(Reply(text="SUMMARY: two long answers."), Reply(text="fits now"))
    outcome = claude.agent.run_turn("question 2")
    assert outcome.text == "fits now" and outcome.error is None
    assert "no longer fits the model's context window" in notices(claude)
    assert claude.agent.session.messages[0].meta.get("summary") and is_valid(claude.agent.session.messages)


# ---- history from elsewhere -------------------------------------------------------------------------------

def test_ids_another_api_made_are_sent_valid_and_paired(claude: Rig) -> None:
    calls = [ToolRequest("functions.readFile:0", "readFile", {"path": "a"}),
             ToolRequest("functions.readFile:0", "readFile", {"path": "b"})]
    claude.agent.session.add_user("read both")
    claude.agent.session.add(Message("assistant", "", tool_calls=calls))
    for n, call in enumerate(calls):
        claude.agent.session.add(Message.tool_result(ToolResult(call.request_id, "readFile", "success",
                                                                {"content": f"RESULT-{n}"})))
    claude.agent.session.add(Message("assistant", "Read both."))
    claude.server.enqueue(Reply(text="I remember."))
    assert claude.agent.run_turn("what did you read?").text == "I remember."
    uses = [b["id"] for blocks in assistant_blocks(claude.server.requests[-1])
            for b in blocks if b["type"] == "tool_use"]
    results = [(b["tool_use_id"], json.dumps(b["content"])) for m in claude.server.requests[-1]["messages"]
               if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    assert len(set(uses)) == 2 and [r[0] for r in results] == uses
    assert "RESULT-0" in results[0][1] and "RESULT-1" in results[1][1]  # each call keeps its own result


def test_the_non_streaming_reply_works_with_thinking(anthropic_server: FakeAnthropicServer) -> None:
    import anthropic

    anthropic_server.enqueue(Reply(reasoning="hmm", text="whole", tool_calls=[bash("ls", "w1")]))
    client = anthropic.Anthropic(api_key="test-key-anthropic", base_url=anthropic_server.base_url, max_retries=0)
    message = client.messages.create(model="claude-sonnet-5-5", max_tokens=2000,
                                     messages=[{"role": "user", "content": "hi"}],
                                     tools=[{"name": "executeBashCommand", "input_schema": {"type": "object"}}])
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature and message.stop_reason == "tool_use"
    assert message.content[2].input["command"] == "ls"
