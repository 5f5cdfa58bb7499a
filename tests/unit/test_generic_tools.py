"""Generic tool mode's pure parts: the reply schema, the history as text, the streamed JSON read back into the
events every adapter emits; the small-model shaping and the per-request tool choice; the tool-mode findings."""

from __future__ import annotations

import json

import jsonschema
import pytest

from framework_core.adapters.generic_tools import GenericReply, reply_schema, to_generic_messages, tools_prompt
from framework_core.adapters.tool_mode import ToolModeMemory, from_props, from_tokens
from framework_core.adapters.tool_shaping import choice_for, native_choice, shape_tools
from framework_core.config.models import ProviderSettings
from framework_core.adapters.profiles import resolve
from framework_core.lial_core import (ICERC_FIELD, Message, TextDelta, ToolCallStart, ToolRequest, ToolResult,
                                      ToolSchema)

BASH = ToolSchema("executeBashCommand", "Run a bash command. Output is cut.", {
    "type": "object", "properties": {"command": {"type": "string"}, "working_directory": {"type": "string"},
                                     ICERC_FIELD: {"type": "string"}},
    "required": ["command", ICERC_FIELD], "additionalProperties": False})


def feed_all(pieces: list[str]) -> tuple[str, list, list]:
    reply, events = GenericReply(), []
    for piece in pieces:
        events += list(reply.feed(piece))
    text, calls, owed = reply.result()
    return text, calls, events + list(owed)


def test_an_answer_streams_as_its_json_string_arrives() -> None:
    raw = json.dumps({"answer": "Two lines:\n\"quoted\" é"})
    text, calls, events = feed_all([raw[i:i + 3] for i in range(0, len(raw), 3)])
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3  # shown piece by piece, not at the end
    assert "".join(deltas) == text == "Two lines:\n\"quoted\" é"
    assert calls == []


def test_a_call_becomes_the_same_events_and_request_as_a_native_one() -> None:
    raw = '{"tool": "executeBashCommand", "arguments": {"command": "ls", "icerc_full_text": "List files."}}'
    text, calls, events = feed_all([raw[:20], raw[20:50], raw[50:]])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.tool_name for s in starts] == ["executeBashCommand"] and text == ""
    assert calls[0].parameters == {"command": "ls"} and calls[0].icerc_full_text == "List files."
    assert calls[0].request_id == starts[0].request_id


def test_a_reply_that_is_not_json_is_plain_text_and_a_cut_call_is_a_parse_error() -> None:
    text, calls, events = feed_all(["Hello ", "there"])
    assert text == "Hello there" and not calls
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    _, calls, _ = feed_all(['{"tool": "executeBashCommand", "arguments": {"comm'])
    assert calls[0].tool_name == "executeBashCommand" and calls[0].parse_error


def test_the_schema_allows_exactly_one_call_or_one_answer_and_the_choice_narrows_it() -> None:
    schema = reply_schema([BASH], "auto")
    call = {"tool": "executeBashCommand", "arguments": {"command": "ls", ICERC_FIELD: "x"}}
    jsonschema.validate(call, schema)
    jsonschema.validate({"answer": "hi"}, schema)
    for bad in ({"answer": "hi", "tool": "x"}, {"tool": "rm", "arguments": {}}, {"tool": "executeBashCommand"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"answer": "hi"}, reply_schema([BASH], "required"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(call, reply_schema([BASH], "answer"))
    assert "executeBashCommand" in tools_prompt([BASH], "auto")


def test_history_goes_as_text_the_model_reads() -> None:
    call = ToolRequest("call_1", "executeBashCommand", {"command": "ls"}, "List files.")
    history = [Message("user", "list"), Message("assistant", "", tool_calls=[call]),
               Message.tool_result(ToolResult("call_1", "executeBashCommand", "success", {"stdout": "a.txt"})),
               Message("user", "thanks"), Message("assistant", "You're welcome.")]
    out = to_generic_messages(history, "SYS")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert json.loads(out[2]["content"]) == {"tool": "executeBashCommand",
                                             "arguments": {"command": "ls", ICERC_FIELD: "List files."}}
    assert out[3]["content"].startswith("Result of the executeBashCommand call:\nok") and "thanks" in out[3]["content"]
    assert json.loads(out[4]["content"]) == {"answer": "You're welcome."}
    assert all("tool_calls" not in m and m["role"] != "tool" for m in out)


def test_a_small_model_sees_no_optional_parameters_and_a_short_required_brief() -> None:
    (shaped,) = shape_tools([BASH], small=True)
    assert set(shaped.parameters["properties"]) == {"command", ICERC_FIELD}
    assert ICERC_FIELD in shaped.parameters["required"]
    assert shaped.parameters["properties"][ICERC_FIELD]["maxLength"] <= 120
    assert shape_tools([BASH], small=False) == [BASH]


def test_tool_choice_per_request_as_the_profile_says() -> None:
    caps = resolve(ProviderSettings(type="openai", model="SmolLM2-135M-Instruct"))
    assert caps.tool_mode == "generic" and caps.small_model
    result = Message.tool_result(ToolResult("c", "t", "success", {}))
    assert choice_for([Message("user", "hi")], caps) == "auto"
    assert choice_for([Message("user", "hi"), result], caps) == "answer"
    forced = resolve(ProviderSettings(type="openai", model="m", tool_choice_first="required"))
    assert choice_for([Message("user", "hi")], forced) == "required"
    assert native_choice("required") == "required" and native_choice("answer") == "none"
    assert native_choice("auto") is None
    assert resolve(ProviderSettings(type="openai", model="unknown-local")).tool_mode == "auto"
    assert resolve(ProviderSettings(type="anthropic", model="claude-sonnet-5-5")).tool_mode == "native"


def test_findings_from_props_and_from_tokens_and_they_are_remembered(tmp_path) -> None:
    props = {"chat_template_caps": {"supports_tools": False, "supports_tool_calls": False}}
    dropped = from_props(props)
    assert dropped is not None and dropped.mode == "generic" and dropped.dropped and "jinja" not in dropped.why
    assert from_props({"chat_template_caps": {"supports_tools": True}}).mode == "native"  # type: ignore[union-attr]
    assert from_props({"model_path": "x"}) is None  # not llama.cpp's capabilities: the token probe decides
    assert from_tokens(30, 30, 200).mode == "generic"
    assert from_tokens(260, 30, 200).mode == "native"
    assert from_tokens(0, 0, 200).dropped is None
    memory = ToolModeMemory(tmp_path / "modes.json")
    assert memory.get("http://h/v1", "m") is None
    memory.remember("http://h/v1/", "m", dropped)
    assert ToolModeMemory(tmp_path / "modes.json").get("http://h/v1", "m") == "generic"
