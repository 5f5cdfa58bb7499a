"""Chat Completions history and stream assembly for compatible servers (pure; the wire tests use the fake)."""

from __future__ import annotations

import pytest

from framework_core.adapters.chat_wire import ThinkSplitter, to_openai_messages
from framework_core.lial_core import Message, ProviderState, ToolRequest


def split(pieces: list[str]) -> tuple[str, str]:
    s = ThinkSplitter()
    out = [p for piece in pieces for p in s.feed(piece)] + s.flush()
    return ("".join(t for k, t in out if k == "reasoning"), "".join(t for k, t in out if k == "text"))


@pytest.mark.parametrize("pieces", [
    ["<think>plan it</think>\n\nThe answer."],
    ["<", "th", "ink>pl", "an it</", "thi", "nk>", "\n\nThe ", "answer."],
    ["  \n<think>", "plan it", "</think>The answer."],
])
def test_think_tags_split_off_whatever_the_chunking(pieces: list[str]) -> None:
    reasoning, text = split(pieces)
    assert reasoning.strip() == "plan it" and text == "The answer."


def test_text_that_only_mentions_think_is_left_alone() -> None:
    text = ["Use <thinking> tags", " like <think>this</think>."]
    assert split(text) == ("", "Use <thinking> tags like <think>this</think>.")
    assert split(["<"]) == ("", "<")
    assert split(["<think>never closed"]) == ("never closed", "")


def test_assistant_tool_call_content_is_an_empty_string_not_null() -> None:
    call = ToolRequest("c1", "readFile", {"path": "a"})
    out = to_openai_messages([Message("user", "hi"), Message("assistant", "", tool_calls=[call]),
                              Message("tool_result", "{}", tool_call_id="c1")], "")
    assert out[1]["content"] == "" and out[1]["tool_calls"][0]["id"] == "c1"


def test_consecutive_user_messages_merge_only_when_asked() -> None:
    history = [Message("user", "one"), Message("user", "two"), Message("assistant", "ok"), Message("user", "three")]
    assert [m["content"] for m in to_openai_messages(history, "", merge_user=True)] == ["one\n\ntwo", "ok", "three"]
    assert len(to_openai_messages(history, "")) == 4


def test_thought_signatures_go_back_only_to_the_model_that_made_them() -> None:
    call = ToolRequest("c1", "readFile", {"path": "a"})
    sig = {"google": {"thought_signature": "SIG=="}}
    turn = Message("assistant", "", tool_calls=[call],
                   provider_state=ProviderState("openai", "gemini-3-pro", [{"call_id": "c1", "extra_content": sig}]))
    history = [Message("user", "hi"), turn, Message("tool_result", "{}", tool_call_id="c1")]
    assert to_openai_messages(history, "", "gemini-3-pro")[1]["tool_calls"][0]["extra_content"] == sig
    assert "extra_content" not in to_openai_messages(history, "", "other-model")[1]["tool_calls"][0]
    again = Message.from_dict(turn.to_dict())
    assert again.provider_state == turn.provider_state
