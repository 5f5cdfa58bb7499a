"""Auto mode and "yes, with network", through the real TEPS and the real sandbox: what would ask runs sandboxed
when the sandbox is complete, needs no network and is not Dangerous, said with its /undo; the rest still asks.
The network answer gives one call the host's network namespace, and nothing else does."""

from __future__ import annotations

import os
from pathlib import Path

from framework_core.core.approval import ScriptedApprover
from framework_core.core.events import ToolCallFinished, ToolCallStarted
from framework_core.lial_core import ToolRequest
from framework_core.sandbox.sandbox import Sandbox
from framework_core.teps import TEPSEngine


def engine(ws: Path, answers=(), *, mode: str = "auto", **kw) -> tuple[TEPSEngine, ScriptedApprover, list, list]:
    events: list = []
    audit: list = []
    approver = ScriptedApprover(answers)
    teps = TEPSEngine({"command_timeout_s": 20}, workspace=ws, approver=approver, events=events.append,
                      audit=audit.append, **kw)
    teps.mode = mode
    return teps, approver, events, audit


def bash(cmd: str, rid: str = "r") -> ToolRequest:
    return ToolRequest(rid, "executeBashCommand", {"command": cmd}, "Intent: test")


def test_auto_runs_a_command_that_would_ask_in_the_sandbox_and_says_how_to_undo_it(workspace: Path) -> None:
    teps, approver, events, audit = engine(workspace)
    result = teps.execute(bash("echo made > made.txt"))
    assert result.status == "success" and approver.seen == []
    assert (workspace / "made.txt").read_text() == "made\n"  # landed from the overlay
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.auto_approved and started.reason == "auto · sandboxed"
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.note == "auto · sandboxed · /undo 1"
    decision = [r for r in audit if r["type"] == "tool_decision"][0]
    assert decision["decided_by"] == "auto mode" and decision["scope"] == {"writes": True, "hold": True}
    assert teps.undo.revert(1).reverted and not (workspace / "made.txt").exists()  # /undo 1 did revert it


def test_auto_still_asks_for_the_network_for_dangerous_commands_and_control_paths(workspace: Path) -> None:
    teps, approver, _, _ = engine(workspace, ["n", "n", "n"])
    teps.policy.allow_dangerous = True
    assert teps.execute(bash("curl -o x https://example.invalid", "net")).status == "declined_by_user"
    assert teps.execute(bash("sudo true", "sudo")).status == "declined_by_user"
    control = ToolRequest("mcp", "writeFile", {"path": ".mcp.json", "content": "{}\n"}, "b")
    assert teps.execute(control).status == "declined_by_user"
    assert [r.request.request_id for r in approver.seen] == ["net", "sudo", "mcp"]
    assert not (workspace / ".mcp.json").exists()


def test_auto_asks_when_the_sandbox_is_not_complete(workspace: Path) -> None:
    no_overlay = Sandbox("workspace-write", workspace, use_overlay=False)
    teps, approver, _, _ = engine(workspace, ["n"], sandbox=no_overlay)
    assert not no_overlay.is_complete()
    assert teps.execute(bash("touch t.txt")).status == "declined_by_user" and len(approver.seen) == 1
    home = Sandbox("workspace-write", workspace, home=workspace)  # the workspace is the home
    assert home.overlay and not home.is_complete()
    assert Sandbox("read-only", workspace).is_complete() is False


def test_ask_mode_is_the_default_and_asks(workspace: Path) -> None:
    teps = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover(["n"]))
    assert teps.mode == "ask"
    assert teps.execute(bash("touch t.txt")).status == "declined_by_user"


NS = "readlink /proc/self/ns/net > ns.txt"


def test_yes_with_network_shares_the_network_namespace_for_that_call_only(workspace: Path) -> None:
    host = os.readlink("/proc/self/ns/net")
    teps, approver, _, audit = engine(workspace, ["w", "y", "a"], mode="ask")
    assert teps.execute(bash(NS, "w")).status == "success"
    assert approver.seen[0].can_network
    assert (workspace / "ns.txt").read_text().strip() == host  # the host's network
    decision = [r for r in audit if r["type"] == "tool_decision"][-1]
    assert decision["decided_by"] == "you: yes, with network" and decision["scope"]["network"] is True
    assert teps.execute(bash(NS, "y")).status == "success"  # a plain yes: its own, empty network namespace
    assert (workspace / "ns.txt").read_text().strip() != host
    assert teps.execute(bash(NS, "a")).status == "success"  # `a` remembers the command, never the network
    assert teps.execute(bash(NS, "again")).status == "success" and len(approver.seen) == 3
    assert (workspace / "ns.txt").read_text().strip() != host


def test_yes_with_network_is_not_offered_when_the_policy_gives_the_network(workspace: Path) -> None:
    teps, approver, _, _ = engine(workspace, ["n"], mode="ask")
    teps.execute(bash("curl -o x https://example.invalid"))
    assert approver.seen[0].can_network is False


def test_auto_still_asks_for_mcp_tools_and_for_declared_tools_that_need_the_network(workspace: Path) -> None:
    from framework_core.tools.base import ToolSpec

    teps, approver, _, _ = engine(workspace, ["n", "n"])
    schema = {"type": "object", "properties": {}}
    teps.registry.register(ToolSpec("srv__fetch", "an MCP tool", schema, lambda args, ctx: {"content": "x"},
                                    source="mcp:srv", server="srv"))
    teps.registry.register(ToolSpec("deploy", "a declared CLI tool", schema, lambda args, ctx: {"exit_code": 0},
                                    source="declared:tools.yaml", network=True, runs_process=True))
    assert teps.execute(ToolRequest("m", "srv__fetch", {}, "b")).status == "declined_by_user"
    assert teps.execute(ToolRequest("d", "deploy", {}, "b")).status == "declined_by_user"
    assert [r.request.request_id for r in approver.seen] == ["m", "d"]


def test_auto_writes_a_workspace_file_without_asking_and_says_how_to_undo_it(workspace: Path) -> None:
    teps, approver, events, _ = engine(workspace)
    write = ToolRequest("w", "writeFile", {"path": "notes.md", "content": "hi\n"}, "b")
    assert teps.execute(write).status == "success" and approver.seen == []
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.note == "auto · /undo 1"
    assert teps.undo.revert(1).reverted and not (workspace / "notes.md").exists()
