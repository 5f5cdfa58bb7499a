"""Context limits: token report, trimming old tool output, summarising older turns through the model."""

from __future__ import annotations

import json

from framework_core.core.compaction import TRIGGER, threshold, trim_tool_output
from framework_core.core.events import Notice
from framework_core.core.history import is_valid
from framework_core.lial_core import Message, ToolRequest, ToolResult
from tests.fakes.script import Reply
from tests.integration.conftest import Rig


def test_trim_keeps_recent_and_notes_the_cut() -> None:
    msgs = []
    for i in range(5):
        msgs.append(Message("assistant", "", tool_calls=[ToolRequest(f"c{i}", "executeBashCommand", {"command": "x"})]))
        msgs.append(Message.tool_result(ToolResult(f"c{i}", "executeBashCommand", "success", {"stdout": "y" * 10_000})))
    trimmed, n = trim_tool_output(msgs, keep_recent=2)
    assert n == 4 and "trimmed to save context" in trimmed[1].content and len(trimmed[1].content) < 2000
    assert trimmed[-1].content == msgs[-1].content and is_valid(trimmed)


def test_compact_summarises_older_turns_and_history_stays_valid(rig: Rig) -> None:
    for i in range(4):
        rig.server.enqueue(Reply(text=f"answer {i}"))
        rig.agent.run_turn(f"question {i}")
    rig.server.enqueue(Reply(text="SUMMARY: four questions were asked."))
    note = rig.agent.compact()
    assert "summarised" in note
    msgs = rig.agent.session.messages
    assert msgs[0].content.startswith("[Summary of the earlier conversation]") and "four questions" in msgs[0].content
    assert [m.content for m in msgs[1:]] == ["question 2", "answer 2", "question 3", "answer 3"]
    rig.server.enqueue(Reply(text="still fine"))
    assert rig.agent.run_turn("next").text == "still fine"  # the provider accepts the compacted history


def test_auto_compaction_runs_before_the_request_that_would_overflow(rig: Rig) -> None:
    """The trigger and the compaction use one measure: when the next request would pass the threshold the
    older turns are summarised first (in the turn loop, so in -p too), as text, without tools."""
    base = rig.agent.context.estimate()
    rig.agent.provider.max_tokens = 500
    rig.agent.provider.context_window = int((base + 1250) / TRIGGER)  # three turns of ~510 tokens pass it
    rig.agent.provider.price_input_per_mtok = 1.0
    rig.agent.provider.price_output_per_mtok = 2.0
    for i in range(3):
        rig.server.enqueue(Reply(text=f"{i}" * 2000))
        rig.agent.run_turn(f"q{i}")
    assert not any(m.meta.get("summary") for m in rig.agent.session.messages)
    assert rig.agent.context.used() >= threshold(rig.agent.caps)
    report = rig.facade.usage_report()
    assert "Estimated cost: $" in report and f"of {rig.agent.caps.context_window:,}" in report
    rig.server.enqueue(Reply(text="SUMMARY: three long answers."), Reply(text="after the summary"))
    assert rig.agent.run_turn("q3").text == "after the summary"
    summary_request = rig.server.requests[-2]
    assert "tools" not in summary_request and "Summarise the conversation" in json.dumps(summary_request)
    assert "tool_use" not in json.dumps(summary_request) and '"tool_calls"' not in json.dumps(summary_request)
    msgs = rig.agent.session.messages
    assert msgs[0].meta.get("summary") and "three long answers" in msgs[0].content
    assert [m.content for m in msgs[1:4]] == ["q2", "2" * 2000, "q3"] and is_valid(msgs)  # two turns kept
    assert any(isinstance(e, Notice) and "summarised" in e.text for e in rig.events)
