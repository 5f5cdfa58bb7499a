"""Generic tool mode through the Chat Completions adapter and the official SDK, against the fake
`llamacpp-notools` dialect (llama.cpp serving a model whose template has no tool support: `/props` says so,
`tools` are dropped, `response_format` is honoured). The real server is in test_local_provider.py."""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from framework_core.core.events import AssistantTextDelta, Notice
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec
from tests.integration.provider_rig import provider_rig


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key="test-key-openai", dialect="llamacpp-notools") as s:
        yield s


def test_an_unknown_model_on_a_server_that_drops_tools_gets_generic_mode(server, workspace, monkeypatch) -> None:
    rig = provider_rig(server, workspace, monkeypatch, api_type="openai", model="fake-model")
    call = ToolCallSpec("readFile", {"path": "notes.txt", "icerc_full_text": "Read the notes."})
    (workspace / "notes.txt").write_text("the notes\n")
    server.enqueue(Reply(tool_calls=[call]), Reply(text="The notes say hello.", chunk_size=4))
    outcome = rig.agent.run_turn("read notes.txt")
    assert [r.status for r in outcome.tool_results] == ["success"]
    assert outcome.text == "The notes say hello."
    first, second = server.requests[-2], server.requests[-1]
    assert "tools" not in first and first["response_format"]["type"] == "json_schema"
    assert "readFile" in first["messages"][0]["content"]  # the tools are described in the system prompt
    sent = second["messages"]
    assert json.loads(sent[-2]["content"])["tool"] == "readFile"  # its own call, as the JSON it wrote
    assert sent[-1]["role"] == "user" and sent[-1]["content"].startswith("Result of the readFile call:")
    assert "the notes" in sent[-1]["content"]
    deltas = [e.text for e in rig.events if isinstance(e, AssistantTextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "The notes say hello."  # the answer streamed
    notes = [e.text for e in rig.events if isinstance(e, Notice)]
    assert any("Generic tool mode for fake-model" in n and "/props" in n for n in notes)


def test_tool_choice_as_the_entry_says(server, workspace, monkeypatch) -> None:
    rig = provider_rig(server, workspace, monkeypatch, api_type="openai", model="fake-model",
                       extra="    tool_mode: generic\n    tool_choice_first: required\n"
                             "    tool_choice_after_result: answer\n")
    server.enqueue(Reply(tool_calls=[ToolCallSpec("readFile", {"path": "x.txt", "icerc_full_text": "r"})]),
                   Reply(text="No such file."))
    rig.agent.run_turn("go")
    first, second = (r["response_format"]["json_schema"]["schema"] for r in server.requests[-2:])
    assert "answer" not in json.dumps(first) and "readFile" in json.dumps(first)  # a call is required
    assert first != second and "answer" in json.dumps(second) and "readFile" not in json.dumps(second)


def test_native_tool_choice_is_a_request_field_not_extra_body(workspace, monkeypatch) -> None:
    with FakeOpenAIServer(api_key="test-key-openai") as native:
        rig = provider_rig(native, workspace, monkeypatch, api_type="openai", model="fake-model",
                           extra="    tool_mode: native\n    tool_choice_first: required\n"
                                 "    tool_choice_after_result: answer\n")
        native.enqueue(Reply(tool_calls=[ToolCallSpec("readFile", {"path": "x.txt", "icerc_full_text": "r"})]),
                       Reply(text="done"))
        rig.agent.run_turn("go")
        assert [r.get("tool_choice") for r in native.requests[-2:]] == ["required", "none"]
