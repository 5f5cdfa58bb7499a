"""TEPS as the user meets it: failed commands fail, a reply's calls listed up front, "yes to the remaining",
dry run without questions, a blocked call said once."""

from __future__ import annotations

from pathlib import Path

from framework_core.core.approval import ApprovalAnswer, ScriptedApprover
from framework_core.core.events import Notice, ToolCallFinished, ToolCallStarted
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine


def engine(ws: Path, answers=()) -> tuple[TEPSEngine, ScriptedApprover, list]:
    events: list = []
    approver = ScriptedApprover(answers)
    teps = TEPSEngine({"command_timeout_s": 10}, workspace=ws, approver=approver, events=events.append)
    return teps, approver, events


def bash(cmd: str, rid: str) -> ToolRequest:
    return ToolRequest(rid, "executeBashCommand", {"command": cmd}, "Intent: test")


def test_a_command_that_fails_is_an_error_for_the_model(workspace: Path) -> None:
    teps, _, _ = engine(workspace)
    result = teps.execute_batch([bash("false", "f")])[0]
    assert result.status == "error" and result.data["exit_code"] == 1
    assert result.is_error and "exited with status 1" in result.to_model_text()
    assert teps.execute_batch([bash("true", "t")])[0].status == "success"


def test_a_reply_s_calls_are_listed_up_front_and_the_remaining_approved_together(workspace: Path) -> None:
    teps, approver, events = engine(workspace, [ApprovalAnswer("once", remaining=True)])
    calls = [bash("touch one", "1"), bash("ls", "2"), bash("touch two", "3"), bash("touch three", "4"),
             bash("rm -rf ~", "5")]
    results = teps.execute_batch(calls)
    plan = [e.text for e in events if isinstance(e, Notice)][0]
    assert plan.startswith("This reply has 5 calls") and "1. Run command: touch one  (asks)" in plan
    assert "2. Run command: ls  (runs)" in plan and "5. Run command: rm -rf ~  (blocked)" in plan
    assert len(approver.seen) == 1 and approver.seen[0].remaining == 2  # the Dangerous one is never counted
    assert [r.status for r in results] == ["success"] * 4 + ["blocked_by_policy"]
    assert (workspace / "two").exists() and (workspace / "three").exists()
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started[2].reason == "you approved the remaining calls of this reply"


def test_dry_run_does_not_ask_about_a_write_it_will_not_make(workspace: Path) -> None:
    teps, approver, events = engine(workspace)
    teps.dry_run = True
    result = teps.execute_batch([ToolRequest("w", "writeFile", {"path": "w.txt", "content": "x\n"}, "b")])[0]
    assert result.status == "dry_run" and approver.seen == [] and not (workspace / "w.txt").exists()
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started and started[0].reason == "dry run: shown, not run" and "w.txt" in started[0].title


def test_a_blocked_call_is_reported_once(workspace: Path) -> None:
    teps, _, events = engine(workspace)
    teps.execute_batch([bash("rm -rf ~", "b")])
    assert not [e for e in events if isinstance(e, Notice)]
    assert [e.result.status for e in events if isinstance(e, ToolCallFinished)] == ["blocked_by_policy"]
