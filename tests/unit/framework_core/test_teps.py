"""TEPSEngine: the stable request/result dicts, statuses, y/n/a, policy decisions, dry run."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.core.approval import ApprovalAnswer, ScriptedApprover
from framework_core.core.events import ToolCallFinished, ToolCallStarted
from framework_core.lial_core import ToolRequest
from framework_core.teps import BatchInterrupted, TEPSEngine
from framework_core.tools.base import ToolSpec


def engine(ws: Path, answers=(), **kw) -> tuple[TEPSEngine, ScriptedApprover, list]:
    events: list = []
    approver = ScriptedApprover(answers)
    teps = TEPSEngine({"command_timeout_s": 10}, workspace=ws, approver=approver, events=events.append, **kw)
    return teps, approver, events


def bash(cmd: str, rid: str = "r1", brief: str = "Intent: test") -> dict:
    return {"request_id": rid, "tool_name": "executeBashCommand", "parameters": {"command": cmd},
            "icerc_full_text": brief}


def test_request_dict_in_result_dict_out_for_safe_command(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    teps, approver, events = engine(workspace)
    out = teps.execute_tool(bash("cat a.txt"))
    assert out["status"] == "success" and out["request_id"] == "r1" and out["tool_name"] == "executeBashCommand"
    assert out["data"]["stdout"] == "hello\n" and out["data"]["exit_code"] == 0
    assert approver.seen == []  # read-only: no prompt
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started and started[0].auto_approved and started[0].body == "cat a.txt"


def test_needs_confirm_y_runs_once_then_asks_again(workspace: Path) -> None:
    teps, approver, _ = engine(workspace, ["y", "y"])
    assert teps.execute_tool(bash("touch made.txt"))["status"] == "success"
    assert (workspace / "made.txt").exists()
    teps.execute_tool(bash("touch made.txt", "r2"))
    assert len(approver.seen) == 2


def test_n_declines_with_reason_and_does_not_run(workspace: Path) -> None:
    teps, approver, _ = engine(workspace, [ApprovalAnswer("deny", reason="use a temp dir")])
    out = teps.execute_tool(bash("touch nope.txt"))
    assert out["status"] == "declined_by_user"
    assert out["data"]["user_reason"] == "use a temp dir"
    assert not (workspace / "nope.txt").exists()


def test_a_remembers_exact_command_for_session_only(workspace: Path) -> None:
    teps, approver, _ = engine(workspace, ["a", "y"])
    teps.execute_tool(bash("touch x.txt"))
    teps.execute_tool(bash("touch x.txt", "r2"))  # same exact command: no prompt
    assert len(approver.seen) == 1
    teps.execute_tool(bash("touch y.txt", "r3"))  # different command: asks again
    assert len(approver.seen) == 2


def test_dangerous_blocked_without_prompt(workspace: Path) -> None:
    teps, approver, _ = engine(workspace)
    out = teps.execute_tool(bash("rm -rf ~"))
    assert out["status"] == "blocked_by_policy" and approver.seen == []
    assert "allow-dangerous" in out["data"]["message"]


def test_dangerous_with_allow_dangerous_asks_default_no_without_a(workspace: Path) -> None:
    teps, approver, _ = engine(workspace, ["n"])
    teps.policy.allow_dangerous = True
    out = teps.execute_tool(bash("sudo true"))
    assert out["status"] == "declined_by_user"
    req = approver.seen[0]
    assert req.default == "deny" and not req.allow_session and req.grant_options == []


def test_a_call_without_a_brief_is_still_asked(workspace: Path) -> None:
    teps, approver, _ = engine(workspace, ["n"])
    teps.execute_tool(bash("touch z", brief=""))
    assert [req.request.icerc_full_text for req in approver.seen] == [""]


def test_unknown_tool_and_bad_arguments_are_error_results(workspace: Path) -> None:
    teps, _, _ = engine(workspace)
    out = teps.execute_tool({"request_id": "x", "tool_name": "nope", "parameters": {}})
    assert out["status"] == "error" and "executeBashCommand" in out["data"]["error_message"]
    bad = ToolRequest.from_raw_arguments("y", "executeBashCommand", '{"command": "ls"')
    res = teps.execute(bad)
    assert res.status == "error" and "JSON" in res.data["error_message"]
    res = teps.execute(ToolRequest("z", "readFile", {}, "b"))
    assert res.status == "error"


def test_write_file_asks_and_shows_diff(workspace: Path) -> None:
    (workspace / "f.txt").write_text("old\n")
    teps, approver, _ = engine(workspace, ["y"])
    res = teps.execute(ToolRequest("w", "writeFile", {"path": "f.txt", "content": "new\n"}, "brief"))
    assert res.status == "success" and (workspace / "f.txt").read_text() == "new\n"
    preview = approver.seen[0].preview
    assert "-old" in preview.body and "+new" in preview.body


def test_dry_run_previews_a_command_and_applies_only_what_is_accepted(workspace: Path) -> None:
    (workspace / "a.txt").write_text("old\n")
    teps, approver, _ = engine(workspace, ["n", "y"])  # answers to the two previews, not to "Allow?"
    teps.dry_run = True
    command = "sed -i s/old/new/ a.txt && touch dry.txt"
    res = teps.execute(ToolRequest("d", "executeBashCommand", {"command": command}, "b"))
    assert res.status == "error" and res.data["changes"].startswith("previewed, NOT applied")  # never reads as ok
    assert "NOT applied" in res.data["error_message"]
    assert (workspace / "a.txt").read_text() == "old\n" and not (workspace / "dry.txt").exists()
    summary, diff = approver.reviewed[0]
    assert "1 file changed" in summary and "+new" in diff and approver.seen == []
    res = teps.execute(ToolRequest("e", "executeBashCommand", {"command": command}, "b"))
    assert (workspace / "a.txt").read_text() == "new\n" and (workspace / "dry.txt").exists()
    assert "1 file created" in res.data["changes"]


def test_dry_run_shows_a_file_write_without_making_it(workspace: Path) -> None:
    teps, _, _ = engine(workspace, ["y"])
    teps.dry_run = True
    res = teps.execute(ToolRequest("w", "writeFile", {"path": "w.txt", "content": "x"}, "b"))
    assert res.status == "dry_run" and not (workspace / "w.txt").exists()


def test_handler_crash_becomes_error_result(workspace: Path) -> None:
    teps, _, _ = engine(workspace)

    def boom(args, ctx):
        raise RuntimeError("kaput")

    teps.registry.register(ToolSpec("boom", "explodes", {"type": "object", "properties": {}}, boom,
                                    permission="always"))
    res = teps.execute(ToolRequest("b", "boom", {}, "b"))
    assert res.status == "error" and "kaput" in res.data["error_message"]


def test_batch_session_grant_covers_later_calls_and_interrupt_answers_all(workspace: Path) -> None:
    teps, approver, events = engine(workspace, ["a"])
    reqs = [ToolRequest(f"c{i}", "executeBashCommand", {"command": "touch same.txt"}, "b") for i in range(3)]
    results = teps.execute_batch(reqs)
    assert [r.status for r in results] == ["success"] * 3 and len(approver.seen) == 1
    assert approver.seen[0].total == 3 and approver.seen[0].index == 1

    class Interrupting:
        def approve(self, req):
            raise KeyboardInterrupt

    teps.approver = Interrupting()
    with pytest.raises(BatchInterrupted) as exc:
        teps.execute_batch([ToolRequest("i1", "executeBashCommand", {"command": "touch q"}, "b"),
                            ToolRequest("i2", "executeBashCommand", {"command": "touch r"}, "b")])
    assert [r.request_id for r in exc.value.results] == ["i1", "i2"]
    assert all(r.status == "declined_by_user" for r in exc.value.results)
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) >= 5


def test_scrubbed_variable_does_not_reach_command(workspace: Path) -> None:
    teps, _, _ = engine(workspace, ["y"], env={"PATH": "/usr/bin:/bin", "MY_API_KEY": "s3cret", "HOME": str(workspace)})
    res = teps.execute(ToolRequest("e", "executeBashCommand", {"command": "echo \"[$MY_API_KEY]\""}, "b"))
    assert "s3cret" not in res.to_model_text()
    assert "[]" in res.data["stdout"]


def test_engine_from_config_dict_with_allowlist_file(workspace: Path, tmp_path: Path) -> None:
    allow = tmp_path / "allow.txt"
    allow.write_text("# one allowed prefix per line (whole words, not characters)\ntouch allowed.txt\ntouch al\n")
    approver = ScriptedApprover()
    teps = TEPSEngine({"allowlist_file": str(allow), "dry_run_enabled": False}, workspace=workspace, approver=approver)
    out = teps.execute_tool(bash("touch allowed.txt"))
    assert out["status"] == "success" and (workspace / "allowed.txt").exists() and approver.seen == []
    approver.push("n")
    assert teps.execute_tool(bash("touch also.txt"))["status"] == "declined_by_user"  # 'touch al' is no prefix of it
    dry = TEPSEngine({"dry_run_enabled": True}, workspace=workspace, approver=ScriptedApprover(["n"]))
    assert "previewed, NOT applied" in dry.execute_tool(bash("touch nope.txt"))["data"]["changes"]
    assert not (workspace / "nope.txt").exists()


def test_the_first_call_says_it_is_being_prepared_and_later_ones_do_not(workspace: Path) -> None:
    from framework_core.core.events import Preparing

    teps, _, events = engine(workspace)
    teps.execute_tool(bash("ls"))
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("Preparing") < kinds.index("ToolCallStarted")  # shown before the silent part, at once
    assert [e.what for e in events if isinstance(e, Preparing)] == ["the sandbox"]
    events.clear()
    teps.execute_tool(bash("ls", "r2"))
    assert not any(isinstance(e, Preparing) for e in events)


def test_a_warm_up_done_before_the_first_call_leaves_nothing_to_prepare(workspace: Path) -> None:
    from framework_core.core.events import Preparing

    teps, _, events = engine(workspace)
    teps.warm_up()
    assert teps.execute_tool(bash("ls"))["status"] == "success"
    assert not any(isinstance(e, Preparing) for e in events)
