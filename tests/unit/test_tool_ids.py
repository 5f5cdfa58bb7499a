"""Tool-call ids made valid for the target API, unique in the conversation, results kept paired."""

from __future__ import annotations

import re

from framework_core.adapters.anthropic_history import to_anthropic_messages
from framework_core.adapters.tool_ids import ANTHROPIC_MAX, OPENAI_MAX, make_unique, wire_ids
from framework_core.lial_core import Message, ToolRequest, ToolResult

PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")


def turn(*ids: str) -> list[Message]:
    calls = [ToolRequest(i, "readFile", {"path": f"f{n}"}) for n, i in enumerate(ids)]
    results = [Message.tool_result(ToolResult(i, "readFile", "success", {"content": f"r{n}"}))
               for n, i in enumerate(ids)]
    return [Message("user", "go"), Message("assistant", "", tool_calls=calls), *results]


def test_ids_from_other_apis_become_valid_unique_and_stay_paired() -> None:
    long_id = "call_" + "x" * 60
    history = turn("functions.readFile:0", "call_0") + turn("call_0", long_id) + turn("call_0", "call_0")
    for limit in (OPENAI_MAX, ANTHROPIC_MAX):
        ids = wire_ids(history, limit)
        sent = [i for calls in ids.calls.values() for i in calls]
        assert all(PATTERN.match(i) and len(i) <= limit for i in sent)
        assert len(set(sent)) == len(sent) == 6
        for index, m in enumerate(history):  # every result carries the id of the call in its position
            if m.role == "assistant":
                answers = [ids.results[index + 1 + k] for k in range(len(m.tool_calls))]
                assert answers == ids.calls[index]


def test_the_same_history_maps_the_same_way_every_time() -> None:
    history = turn("a.b", "a_b") + turn("a.b")
    assert wire_ids(history, 40).calls == wire_ids(history, 40).calls


def test_results_given_out_of_order_still_find_their_call() -> None:
    history = turn("x1", "x2")
    history[2], history[3] = history[3], history[2]
    ids = wire_ids(history, 40)
    assert ids.results[2] == ids.calls[1][1] and ids.results[3] == ids.calls[1][0]


def test_anthropic_history_has_valid_ids_and_results_first() -> None:
    history = turn("functions.x:0", "functions.x:0")
    history.append(Message("user", "and then?"))
    wire = to_anthropic_messages(history)
    uses = [b["id"] for b in wire[1]["content"]]
    results = wire[2]["content"]
    assert len(set(uses)) == 2 and [b["tool_use_id"] for b in results[:2]] == uses
    assert results[-1] == {"type": "text", "text": "and then?"}


def test_make_unique_renames_repeats_within_the_conversation_and_the_reply() -> None:
    history = turn("call_0")
    new = [ToolRequest("call_0", "readFile", {}), ToolRequest("call_0", "readFile", {}), ToolRequest("", "x", {})]
    make_unique(history, new)
    ids = [c.request_id for c in new]
    assert len(set(ids) | {"call_0"}) == 4 and all(PATTERN.match(i) for i in ids)
