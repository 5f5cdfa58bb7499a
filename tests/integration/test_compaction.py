"""Context limits: token report, trimming old tool output, summarising older turns through the model."""

from __future__ import annotations

from framework_core.compaction import compact, maybe_compact, trim_tool_output, usage_report
from framework_core.history import is_valid
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
    note = compact(rig.agent, force=True)
    assert "summarised" in note
    msgs = rig.agent.session.messages
    assert msgs[0].content.startswith("[Summary of the earlier conversation]") and "four questions" in msgs[0].content
    assert [m.content for m in msgs[1:]] == ["question 2", "answer 2", "question 3", "answer 3"]
    rig.server.enqueue(Reply(text="still fine"))
    assert rig.agent.run_turn("next").text == "still fine"  # the provider accepts the compacted history


def test_auto_compaction_near_the_window_and_usage_report(rig: Rig) -> None:
    rig.agent.provider.context_window = 1000
    rig.agent.provider.price_input_per_mtok = 1.0
    rig.agent.provider.price_output_per_mtok = 2.0
    for i in range(3):
        rig.server.enqueue(Reply(text="x" * 1500))
        rig.agent.run_turn(f"q{i}")
    report = usage_report(rig.agent)
    assert "Estimated cost: $" in report and "of 1,000" in report
    rig.server.enqueue(Reply(text="short summary"))
    note = maybe_compact(rig.agent)
    assert note and "Compacted" in note
    assert rig.agent.session.messages[0].meta.get("summary")
