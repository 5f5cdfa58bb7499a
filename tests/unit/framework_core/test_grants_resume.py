"""`a` grants are kept in the session's journal and come back when the same session is continued or resumed."""

from __future__ import annotations

from pathlib import Path

from framework_core.core.approval import ScriptedApprover
from framework_core.core.session import load_transcript, open_session
from framework_core.teps import TEPSEngine


def touch(rid: str) -> dict:
    return {"request_id": rid, "tool_name": "executeBashCommand", "parameters": {"command": "touch made.txt"},
            "icerc_full_text": "b"}


def test_a_grant_comes_back_with_the_session_and_a_revoked_one_does_not(workspace: Path, tmp_path: Path) -> None:
    session = open_session(tmp_path / "data")
    first = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover(["a"]))
    first.audit = session.record
    assert first.execute_tool(touch("r1"))["status"] == "success"
    session.close()
    meta = load_transcript(session.transcript.path).meta
    assert [g["value"] for g in meta["grants"]] == ["touch made.txt"]
    again = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover([]))  # asking would decline
    assert again.restore_grants(meta["grants"]) == []
    assert again.execute_tool(touch("r2"))["status"] == "success"  # the grant let it run, unasked

    later = open_session(tmp_path / "data", session.session_id)
    again.audit = later.record
    (number,) = [n for n, _ in again.policy.grants.list()]
    again.revoke(number)
    later.close()
    assert load_transcript(later.transcript.path).meta["grants"] == []
