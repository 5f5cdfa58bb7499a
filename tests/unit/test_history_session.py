from __future__ import annotations

import json
from pathlib import Path

from framework_core.core.history import is_valid, repair
from framework_core.lial_core import Message, ToolRequest, ToolResult, Usage
from framework_core.core.session import list_sessions, load_transcript, open_session


def call(rid: str, name: str = "executeBashCommand") -> ToolRequest:
    return ToolRequest(rid, name, {"command": "ls"}, "brief")


def result(rid: str) -> Message:
    return Message.tool_result(ToolResult(rid, "executeBashCommand", "success", {"stdout": "x"}))


def test_repair_answers_every_unanswered_call_in_order() -> None:
    msgs = [Message("user", "hi"), Message("assistant", "", tool_calls=[call("a"), call("b"), call("c")]), result("b")]
    fixed, fixes = repair(msgs)
    assert [m.tool_call_id for m in fixed[2:]] == ["a", "b", "c"]
    assert fixed[2].is_error and "interrupted" in fixed[2].content
    assert not fixed[3].is_error
    assert len(fixes) == 2 and is_valid(fixed)


def test_repair_drops_orphans_and_empty_assistant() -> None:
    msgs = [Message("user", "hi"), result("zzz"), Message("assistant", ""), Message("assistant", "ok")]
    fixed, fixes = repair(msgs)
    assert [m.role for m in fixed] == ["user", "assistant"]
    assert len(fixes) == 2


def test_valid_history_untouched() -> None:
    msgs = [Message("user", "hi"), Message("assistant", "t", tool_calls=[call("a")]), result("a"),
            Message("assistant", "done")]
    assert repair(msgs) == (msgs, [])


def test_transcript_roundtrip_and_corrupt_last_line(tmp_path: Path) -> None:
    s = open_session(tmp_path, secrets_to_mask=("sk-secret-value-123",))
    s.start({"workspace": "/ws"})
    s.add_user("please use sk-secret-value-123")
    s.add(Message("assistant", "", tool_calls=[call("a")]))
    s.add_result(ToolResult("a", "executeBashCommand", "success", {"stdout": "x"}))
    s.record_usage(Usage(10, 5))
    s.transcript.close()
    path = s.transcript.path
    raw = path.read_text()
    assert "sk-secret-value-123" not in raw and "***" in raw
    with open(path, "a") as fh:
        fh.write('{"type": "message", "message": {"role": "assis')  # a kill -9 mid-write
    loaded = load_transcript(path)
    assert [m.role for m in loaded.messages] == ["user", "assistant", "tool_result"]
    assert loaded.usage.input_tokens == 10
    assert any("line 6" in w for w in loaded.warnings)


def test_kill_mid_turn_leaves_loadable_valid_history(tmp_path: Path) -> None:
    s = open_session(tmp_path)
    s.add_user("go")
    s.add(Message("assistant", "", tool_calls=[call("a"), call("b")]))
    s.add_result(ToolResult("a", "executeBashCommand", "success", {}))
    # process dies here: b never answered
    loaded = load_transcript(s.transcript.path)
    assert is_valid(loaded.messages)
    assert loaded.messages[-1].tool_call_id == "b"


def test_list_sessions_filters_by_workspace(tmp_path: Path) -> None:
    for ws in ("/a", "/b"):
        s = open_session(tmp_path)
        s.start({"workspace": ws})
        s.add_user(f"hello from {ws}")
        s.transcript.close()
    rows = list_sessions(tmp_path, Path("/a"))
    assert len(rows) == 1 and rows[0].preview == "hello from /a" and rows[0].messages == 1


def test_clear_and_replace_records(tmp_path: Path) -> None:
    s = open_session(tmp_path)
    s.add_user("one")
    s.clear()
    s.add_user("two")
    s.replace([Message("user", "summary")], "compaction")
    s.add_user("three")
    loaded = load_transcript(s.transcript.path)
    assert [m.content for m in loaded.messages] == ["summary", "three"]
    records = [json.loads(line)["type"] for line in s.transcript.path.read_text().splitlines()]
    assert records.count("clear") == 1 and records.count("replace") == 1
