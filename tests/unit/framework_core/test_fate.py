"""A call's fate through the real TEPS: for every mode × verdict × dry run, the list of a reply's calls says what
then happens, and what happens is the table below (plan mode with dry run on refuses, in the list and the run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.core.events import Notice, ToolCallStarted
from framework_core.core.fate import CYCLE
from framework_core.lial_core import ToolRequest
from framework_core.policy.rules import Rule
from framework_core.teps import TEPSEngine

CALLS = {  # name: (tool, arguments, allow_dangerous)
    "safe": ("executeBashCommand", {"command": "cat a.txt"}, False),
    "confirm": ("executeBashCommand", {"command": "touch new.txt"}, False),
    "network": ("executeBashCommand", {"command": "curl -o x https://example.invalid"}, False),
    "dangerous": ("executeBashCommand", {"command": "sudo true"}, True),
    "blocked": ("executeBashCommand", {"command": "sudo true"}, False),
    "edit": ("writeFile", {"path": "w.txt", "content": "x\n"}, False),
    "control": ("writeFile", {"path": ".mcp.json", "content": "{}\n"}, False),
}
PLAN = "not run: plan mode"
#: mode -> the word for each call, without and with dry run (calls in the order of CALLS)
TABLE = {
    "ask": (["runs", "asks", "asks", "asks", "blocked", "asks", "asks"],
            ["previewed", "previewed", "previewed", "shown", "blocked", "shown", "shown"]),
    "accept-edits": (["runs", "asks", "asks", "asks", "blocked", "runs: accept-edits", "asks"],
                     ["previewed", "previewed", "previewed", "shown", "blocked", "shown", "shown"]),
    "plan": (["runs", PLAN, PLAN, PLAN, "blocked", PLAN, PLAN],
             ["previewed", PLAN, PLAN, PLAN, "blocked", PLAN, PLAN]),
    "auto": (["runs", "runs: auto", "asks", "asks", "blocked", "runs: auto", "asks"],
             ["previewed", "previewed", "previewed", "shown", "blocked", "shown", "shown"]),
}


def observed(name: str, teps: TEPSEngine, approver: ScriptedApprover, events: list) -> tuple[str, str]:
    """(what the up-front list said of the call, what then happened to it)."""
    listing = [e.text for e in events if isinstance(e, Notice) and e.text.startswith("This reply has")]
    said = re.search(r"^  1\. .*  \((.+)\)$", listing[0], re.M)
    assert said, listing
    result = next(e for e in events if getattr(e, "request", None) and e.request.request_id == name
                  and type(e).__name__ == "ToolCallFinished").result
    started = [e for e in events if isinstance(e, ToolCallStarted) and e.request.request_id == name]
    if any(r.request.request_id == name for r in approver.seen):
        happened = "asks"
    elif result.status == "blocked_by_policy":
        happened = "blocked"
    elif result.status == "declined_by_user" and result.data.get("mode") == "plan":
        happened = PLAN
    elif result.status == "dry_run":
        happened = "shown"
    elif started and started[0].reason.startswith("dry run: a preview"):
        happened = "previewed"
    elif started and started[0].reason.startswith(("accept-edits mode", "auto")):
        happened = "runs: " + started[0].reason.split(" ")[0]
    else:
        happened = "runs" if started and started[0].auto_approved else f"? {result.status}"
    return said.group(1), happened


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
@pytest.mark.parametrize("mode", CYCLE)
def test_the_list_says_what_happens_and_both_follow_the_table(workspace: Path, mode: str, dry_run: bool) -> None:
    (workspace / "a.txt").write_text("hello\n")
    for n, (name, (tool, args, dangerous)) in enumerate(CALLS.items()):
        events: list = []
        approver = ScriptedApprover(["n"] * 4)
        teps = TEPSEngine({"command_timeout_s": 20}, workspace=workspace, approver=approver, events=events.append)
        assert teps.sandbox.is_complete()
        teps.policy.rules.rules.append(Rule("no-shred", "deny", "test", prefix=("shred",)))
        teps.policy.allow_dangerous = dangerous
        teps.mode, teps.dry_run = mode, dry_run
        filler = ToolRequest("filler", "executeBashCommand", {"command": "shred nothing"}, "b")  # always blocked
        teps.execute_batch([ToolRequest(name, tool, dict(args), "Intent: test"), filler])
        said, happened = observed(name, teps, approver, events)
        want = TABLE[mode][dry_run][n]
        assert (name, said, happened) == (name, want, want)
        teps.close()


def test_plan_mode_with_dry_run_refuses_in_the_list_and_the_run(workspace: Path) -> None:
    events: list = []
    teps = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover(), events=events.append)
    teps.mode, teps.dry_run = "plan", True
    results = teps.execute_batch([ToolRequest("1", "executeBashCommand", {"command": "touch p.txt"}, "b"),
                                  ToolRequest("2", "executeBashCommand", {"command": "sudo true"}, "b")])
    listing = next(e.text for e in events if isinstance(e, Notice))
    assert "1. Run command: touch p.txt  (not run: plan mode)" in listing
    assert results[0].status == "declined_by_user" and results[0].data["mode"] == "plan"
    assert not (workspace / "p.txt").exists()
