"""The loop guard: the same call after a decline or failure, or N times in a row, stops the turn."""

from __future__ import annotations

from framework_core.core.loop_guard import LoopGuard
from framework_core.lial_core import ToolRequest, ToolResult


def call(cid: str, command: str = "ls", brief: str = "") -> ToolRequest:
    return ToolRequest(cid, "executeBashCommand", {"command": command}, brief)


def ran(guard: LoopGuard, c: ToolRequest, status: str = "success") -> None:
    guard.record([c], [ToolResult(c.request_id, c.tool_name, status, {})])  # type: ignore[arg-type]


def test_the_same_call_the_limit_times_in_a_row_stops() -> None:
    guard = LoopGuard(limit=3)
    for i in range(2):
        c = call(f"c{i}", brief=f"brief {i}")  # the brief is not part of the call's identity
        assert guard.check([c]) is None
        ran(guard, c)
    stop = guard.check([call("c2")])
    assert stop is not None and "3 times in a row" in stop.user_note and "Not run" in stop.model_note
    results = guard.stopped_results([call("c2")], stop)
    assert [r.request_id for r in results] == ["c2"] and results[0].status == "error"


def test_another_call_in_between_resets_the_run() -> None:
    guard = LoopGuard(limit=3)
    for i, command in enumerate(["ls", "ls", "pwd", "ls", "ls"]):
        c = call(f"c{i}", command)
        assert guard.check([c]) is None
        ran(guard, c)


def test_a_call_repeated_after_it_was_declined_or_failed_stops_at_once() -> None:
    for status, word in (("declined_by_user", "declined"), ("blocked_by_policy", "declined"), ("error", "failed")):
        guard = LoopGuard(limit=5)
        ran(guard, call("a", "rm x"), status)
        assert guard.check([call("b", "ls")]) is None
        stop = guard.check([call("b", "rm x")])
        assert stop is not None and word in stop.user_note
