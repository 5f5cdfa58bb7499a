"""The MCP client against real servers from PyPI (mcp-server-time, mcp-server-git) and the slow test server:
listing, permissions, calls through TEPS, tool errors and timeouts that leave the server up, a server killed
while idle noticed at once and restarted, logs, start failures reported once, clean shutdown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.core.approval import ApprovalAnswer, ScriptedApprover
from framework_core.config.models import McpServerSettings
from framework_core.errors import ToolError
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine
from framework_core.tools.base import ToolRegistry
from framework_core.tools.builtin import builtin_tools
from framework_core.tools.mcp import McpManager
from tests.integration.mcp_servers import SLOW, alive, child_pids, wait_for

Rig = tuple[McpManager, ToolRegistry, Path]


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    return repo


@pytest.fixture(scope="module")
def manager(tmp_path_factory: pytest.TempPathFactory, git_repo: Path) -> Iterator[Rig]:
    logs = tmp_path_factory.mktemp("logs")
    registry = ToolRegistry()
    for spec in builtin_tools():
        registry.register(spec)
    servers = {
        "time": McpServerSettings(command=sys.executable, args=["-m", "mcp_server_time"], permission="ask",
                                  tools={"get_current_time": "always", "convert_time": "never"}),
        "git": McpServerSettings(command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(git_repo)],
                                 permission="always", tools={"git_commit": "ask"}),
        "slow": McpServerSettings(command=sys.executable, args=[SLOW], call_timeout_s=3),
    }
    mgr = McpManager(servers, registry, logs, git_repo)
    mgr.start()
    assert mgr.wait_ready(60) == [], mgr.status()
    yield mgr, registry, logs
    mgr.close()


def teps_for(registry: ToolRegistry, ws: Path, answers=()) -> tuple[TEPSEngine, ScriptedApprover]:
    approver = ScriptedApprover(answers)
    return TEPSEngine({}, registry=registry, workspace=ws, approver=approver), approver


def test_start_returns_at_once(tmp_path: Path) -> None:
    """start() returns while a server that takes a minute to come up is still starting (a state, not a time:
    a loaded machine cannot make this pass or fail)."""
    mgr = McpManager({"s": McpServerSettings(command=sys.executable, args=[SLOW], env={"SLOW_START_S": "60"})},
                     ToolRegistry(), tmp_path, tmp_path)
    try:
        mgr.start()
        assert {s.name: s.state for s in mgr.status()}["s"] == "starting", "start() must not block the prompt"
    finally:
        mgr.close()


def test_reference_servers_list_their_tools(manager: Rig) -> None:
    mgr, _, _ = manager
    tools = {s.name: set(s.tools) for s in mgr.status()}
    assert {"get_current_time", "convert_time"} <= tools["time"] and "git_status" in tools["git"]


def test_permissions_come_from_the_server_and_tool_settings(manager: Rig) -> None:
    _, registry, _ = manager
    perms = {n: registry.get(n).permission for n in ("mcp__time__get_current_time", "mcp__time__convert_time",
                                                     "mcp__git__git_status", "mcp__git__git_commit", "mcp__slow__echo")}
    assert perms == {"mcp__time__get_current_time": "always", "mcp__time__convert_time": "never",
                     "mcp__git__git_status": "always", "mcp__git__git_commit": "ask", "mcp__slow__echo": "ask"}


def test_never_tools_are_not_offered_to_the_model(manager: Rig) -> None:
    _, registry, _ = manager
    assert "mcp__time__convert_time" not in [s.name for s in registry.schemas()]


def test_offered_tools_carry_the_icerc_field(manager: Rig) -> None:
    _, registry, _ = manager
    assert "icerc_full_text" in registry.get("mcp__time__get_current_time").llm_schema().parameters["required"]


def test_call_always_runs_without_prompt(manager: Rig, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, approver = teps_for(registry, git_repo)
    res = teps.execute(ToolRequest("t1", "mcp__time__get_current_time", {"timezone": "UTC"}, "brief"))
    assert (res.status, '"timezone": "UTC"' in res.data["content"], approver.seen) == ("success", True, [])


def test_approval_panel_names_the_server_and_the_arguments(manager: Rig, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, approver = teps_for(registry, git_repo, ["y"])
    teps.execute(ToolRequest("e1", "mcp__slow__echo", {"text": "hi 1"}, "Intent: echo"))
    seen = approver.seen[0]
    assert (seen.server, "trick" in (seen.warning or ""), '"text": "hi 1"' in seen.preview.body) == ("slow", True, True)


def test_decline_carries_the_users_reason(manager: Rig, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, _ = teps_for(registry, git_repo, [ApprovalAnswer("deny", reason="not now")])
    declined = teps.execute(ToolRequest("e2", "mcp__slow__echo", {"text": "x"}, "b"))
    assert (declined.status, declined.data["user_reason"]) == ("declined_by_user", "not now")


def test_session_grant_covers_only_that_tool(manager: Rig, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, approver = teps_for(registry, git_repo, ["a", "n"])
    teps.execute(ToolRequest("e3", "mcp__slow__echo", {"text": "x"}, "b"))
    again = teps.execute(ToolRequest("e4", "mcp__slow__echo", {"text": "y"}, "b")).status
    other = teps.execute(ToolRequest("f1", "mcp__slow__fail", {}, "b")).status
    assert (again, other, len(approver.seen)) == ("success", "declined_by_user", 2)


def test_never_tool_is_refused(manager: Rig, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, _ = teps_for(registry, git_repo)
    assert teps.execute(ToolRequest("n1", "mcp__time__convert_time", {}, "b")).status == "blocked_by_policy"


def test_tool_error_becomes_an_error_result(manager: Rig, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, _ = teps_for(registry, git_repo, ["y"])
    res = teps.execute(ToolRequest("x1", "mcp__slow__fail", {}, "b"))
    assert res.status == "error" and "reported an error" in res.data["error_message"]


def test_tool_error_leaves_the_server_up(manager: Rig) -> None:
    mgr, _, _ = manager
    with pytest.raises(ToolError):
        mgr.call("slow", "fail", {})
    assert mgr.call("slow", "echo", {"text": "still here"})["content"] == "still here"


def test_a_hanging_call_times_out_as_a_result(manager: Rig) -> None:
    mgr, _, _ = manager
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"did not answer within 3 s \(progress notifications extend that, up to 30 "
                                        r"s in all\); the call was cancelled"):
        mgr.call("slow", "nap", {"seconds": 60})
    assert time.monotonic() - started < 30  # not the nap's 60 s


def test_a_timed_out_call_leaves_the_same_server_process_running(manager: Rig) -> None:
    mgr, _, _ = manager
    before = child_pids(SLOW)
    with pytest.raises(ToolError):
        mgr.call("slow", "nap", {"seconds": 6})
    assert (mgr.call("slow", "echo", {"text": "back"})["content"], child_pids(SLOW)) == ("back", before)


def test_server_stderr_goes_to_its_log_file(manager: Rig) -> None:
    mgr, _, logs = manager
    mgr.call("slow", "echo", {"text": "to the log"})
    wait_for(lambda: "echo called with 'to the log'" in (logs / "mcp-slow.log").read_text(), 10, "the log line")


def test_killed_idle_server_is_noticed_when_it_dies(manager: Rig, git_repo: Path) -> None:
    mgr, _, _ = manager
    mgr.take_notices()
    for pid in wait_for(lambda: child_pids("mcp_server_git"), 10, "the git server this test started"):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: any("'git' stopped" in text for _, text in mgr.take_notices()), 10, "the notice of the death")


def test_killed_idle_server_answers_the_next_call(manager: Rig, git_repo: Path) -> None:
    mgr, _, _ = manager
    for pid in wait_for(lambda: child_pids("mcp_server_git"), 10, "the git server this test started"):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: {s.name: s.state for s in mgr.status()}["git"] != "ready", 10, "the death to be noticed")
    out = mgr.call("git", "git_status", {"repo_path": str(git_repo)})
    assert "Repository status" in out["content"]


@pytest.mark.parametrize("settings", [McpServerSettings(command="/nonexistent/server"),
                                      McpServerSettings(url="http://127.0.0.1:9/mcp")], ids=["stdio", "http"])
def test_dead_server_at_start_is_reported_once(tmp_path: Path, settings: McpServerSettings) -> None:
    mgr = McpManager({"broken": settings}, ToolRegistry(), tmp_path, tmp_path)
    mgr.start()
    mgr.wait_ready(30)
    notices = mgr.take_notices() + mgr.take_notices()
    mgr.close()
    assert [level for level, text in notices if "'broken' failed to start" in text] == ["error"]


def test_an_http_server_that_is_not_there_is_named(tmp_path: Path) -> None:
    mgr = McpManager({"gone": McpServerSettings(url="http://127.0.0.1:9/mcp")}, ToolRegistry(), tmp_path, tmp_path)
    mgr.start()
    mgr.wait_ready(30)
    error = mgr.status()[0].error or ""
    mgr.close()
    assert error.startswith("cannot connect to http://127.0.0.1:9/mcp (") and error.endswith("is the server running?")


def test_dead_server_at_start_makes_calls_fail_clearly(tmp_path: Path) -> None:
    mgr = McpManager({"broken": McpServerSettings(command="/nonexistent/server")}, ToolRegistry(), tmp_path, tmp_path)
    mgr.start()
    mgr.wait_ready(30)
    try:
        with pytest.raises(ToolError, match="not available .command not found: /nonexistent/server"):
            mgr.call("broken", "x", {})
    finally:
        mgr.close()


def test_close_leaves_no_child_processes(tmp_path: Path) -> None:
    mgr = McpManager({"s": McpServerSettings(command=sys.executable, args=[SLOW, "closing"])}, ToolRegistry(),
                     tmp_path, tmp_path)
    mgr.start()
    assert mgr.wait_ready(30) == []
    children = child_pids("closing")
    mgr.close()
    assert children and wait_for(lambda: not any(alive(p) for p in children), 10, "the server to exit")
