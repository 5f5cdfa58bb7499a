"""The MCP client against real servers from PyPI (mcp-server-time, mcp-server-git) and a small test server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.approval import ApprovalAnswer, ScriptedApprover
from framework_core.config import McpServerSettings
from framework_core.errors import ConfigError, ToolError
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine
from framework_core.tools.base import ToolRegistry
from framework_core.tools.builtin import builtin_tools
from framework_core.tools.mcp import McpManager, load_mcp_json

SLOW = str(Path(__file__).with_name("mcp_servers") / "slow_server.py")


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    return repo


@pytest.fixture(scope="module")
def manager(tmp_path_factory: pytest.TempPathFactory, git_repo: Path) -> Iterator[tuple[McpManager, ToolRegistry, Path]]:
    logs = tmp_path_factory.mktemp("logs")
    registry = ToolRegistry()
    for spec in builtin_tools():
        registry.register(spec)
    servers = {
        "time": McpServerSettings(command=sys.executable, args=["-m", "mcp_server_time"], permission="ask",
                                  tools={"get_current_time": "always", "convert_time": "never"}),
        "git": McpServerSettings(command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(git_repo)],
                                 permission="always", tools={"git_commit": "ask"}),
        "slow": McpServerSettings(command=sys.executable, args=[SLOW], call_timeout_s=1.5),
    }
    mgr = McpManager(servers, registry, logs, git_repo)
    started = time.monotonic()
    mgr.start()
    assert time.monotonic() - started < 0.5, "start() must not block the prompt"
    assert mgr.wait_ready(30) == []
    states = {s.name: (s.state, s.error, s.tools) for s in mgr.status()}
    assert all(state == "ready" for state, _, _ in states.values()), states
    yield mgr, registry, logs
    mgr.close()


def teps_for(registry: ToolRegistry, ws: Path, answers=()) -> tuple[TEPSEngine, ScriptedApprover]:
    approver = ScriptedApprover(answers)
    return TEPSEngine({}, registry=registry, workspace=ws, approver=approver), approver


def test_tools_listed_with_names_and_permissions(manager) -> None:
    mgr, registry, _ = manager
    status = {s.name: s for s in mgr.status()}
    assert status["time"].state == "ready" and "get_current_time" in status["time"].tools
    assert "git_status" in status["git"].tools
    spec = registry.get("mcp__time__get_current_time")
    assert spec is not None and spec.permission == "always" and spec.server == "time"
    assert registry.get("mcp__time__convert_time").permission == "never"
    assert registry.get("mcp__git__git_status").permission == "always"  # server default
    assert registry.get("mcp__git__git_commit").permission == "ask"  # tool overrides server
    assert registry.get("mcp__slow__echo").permission == "ask"  # default
    schema = spec.llm_schema().parameters
    assert "icerc_full_text" in schema["required"]
    names = [s.name for s in registry.schemas()]
    assert "mcp__time__convert_time" not in names  # 'never' tools are not offered


def test_call_always_runs_without_prompt(manager, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, approver = teps_for(registry, git_repo)
    res = teps.execute_tool(ToolRequest("t1", "mcp__time__get_current_time", {"timezone": "UTC"}, "brief"))
    assert res.status == "success" and '"timezone": "UTC"' in res.data["content"]
    assert approver.seen == []


def test_call_approved_and_declined_and_session_grant(manager, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, approver = teps_for(registry, git_repo, ["y", ApprovalAnswer("deny", reason="not now"), "a"])
    req = lambda i: ToolRequest(f"e{i}", "mcp__slow__echo", {"text": f"hi {i}"}, "Intent: echo")
    assert teps.execute_tool(req(1)).data["content"] == "hi 1"
    seen = approver.seen[0]
    assert seen.server == "slow" and "trick" in (seen.warning or "") and '"text": "hi 1"' in seen.preview.body
    declined = teps.execute_tool(req(2))
    assert declined.status == "declined_by_user" and declined.data["user_reason"] == "not now"
    assert teps.execute_tool(req(3)).status == "success"  # 'a': allow for this chat
    assert teps.execute_tool(req(4)).status == "success" and len(approver.seen) == 3
    # the grant covers only that tool
    teps.approver = ScriptedApprover(["n"])
    assert teps.execute_tool(ToolRequest("f1", "mcp__slow__fail", {}, "b")).status == "declined_by_user"


def test_never_tool_is_refused(manager, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, _ = teps_for(registry, git_repo)
    res = teps.execute_tool(ToolRequest("n1", "mcp__time__convert_time", {}, "b"))
    assert res.status == "blocked_by_policy"


def test_tool_error_becomes_error_result(manager, git_repo: Path) -> None:
    _, registry, _ = manager
    teps, _ = teps_for(registry, git_repo, ["y"])
    res = teps.execute_tool(ToolRequest("x1", "mcp__slow__fail", {}, "b"))
    assert res.status == "error" and "reported an error" in res.data["error_message"]


def test_hanging_call_times_out_then_server_restarts(manager) -> None:
    mgr, _, _ = manager
    started = time.monotonic()
    with pytest.raises(ToolError, match="did not answer within"):
        mgr.call("slow", "nap", {"seconds": 10})
    assert time.monotonic() - started < 5
    assert mgr.call("slow", "echo", {"text": "back"})["content"] == "back"


def test_killed_server_is_restarted_on_next_use(manager, git_repo: Path) -> None:
    mgr, _, _ = manager
    assert "Repository status" in mgr.call("git", "git_status", {"repo_path": str(git_repo)})["content"]
    pids = subprocess.run(["pgrep", "-f", "mcp_server_git"], capture_output=True, text=True).stdout.split()
    assert pids
    for pid in pids:
        os.kill(int(pid), signal.SIGKILL)
    time.sleep(0.5)
    try:
        out = mgr.call("git", "git_status", {"repo_path": str(git_repo)})
    except ToolError as exc:  # the first call after the death may report it clearly ...
        assert "git" in str(exc)
        out = mgr.call("git", "git_status", {"repo_path": str(git_repo)})  # ... and the next restarts it
    assert "Repository status" in out["content"]


def test_server_stderr_goes_to_log_file(manager) -> None:
    mgr, _, logs = manager
    mgr.call("slow", "echo", {"text": "to the log"})
    time.sleep(0.3)
    assert "echo called with 'to the log'" in (logs / "mcp-slow.log").read_text()


@pytest.mark.parametrize("settings", [McpServerSettings(command="/nonexistent/server"),
                                      McpServerSettings(url="http://127.0.0.1:9/mcp")], ids=["stdio", "http"])
def test_dead_server_at_start_is_reported_not_fatal(tmp_path: Path, settings: McpServerSettings) -> None:
    registry = ToolRegistry()
    mgr = McpManager({"broken": settings}, registry, tmp_path, tmp_path)
    mgr.start()
    mgr.wait_ready(30)
    status = mgr.status()[0]
    assert status.state == "failed" and status.error
    with pytest.raises(ToolError, match="not available"):
        mgr.call("broken", "x", {})
    mgr.close()


def test_mcp_json(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    servers = load_mcp_json(tmp_path)
    assert servers["t"].command == "uvx" and servers["t"].args == ["mcp-server-time"]
    (tmp_path / ".mcp.json").write_text("{broken")
    with pytest.raises(ConfigError, match="invalid JSON"):
        load_mcp_json(tmp_path)


def test_close_leaves_no_child_processes(tmp_path: Path) -> None:
    registry = ToolRegistry()
    before = set(subprocess.run(["pgrep", "-f", SLOW], capture_output=True, text=True).stdout.split())
    mgr = McpManager({"s": McpServerSettings(command=sys.executable, args=[SLOW])}, registry, tmp_path, tmp_path)
    mgr.start()
    assert mgr.wait_ready(20) == []
    children = set(subprocess.run(["pgrep", "-f", SLOW], capture_output=True, text=True).stdout.split()) - before
    assert children
    mgr.close()
    time.sleep(0.5)
    alive = [p for p in children if Path(f"/proc/{p}").exists() and "Z" not in Path(f"/proc/{p}/stat").read_text().split()[2]]
    assert alive == []


@pytest.fixture
def http_server() -> Iterator[str]:
    """The test server over Streamable HTTP, on a free loopback port."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, SLOW, "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


def test_streamable_http_server_lists_and_calls_tools(tmp_path: Path, http_server: str) -> None:
    registry = ToolRegistry()
    mgr = McpManager({"remote": McpServerSettings(url=http_server, permission="always", call_timeout_s=5)},
                     registry, tmp_path, tmp_path)
    mgr.start()
    try:
        assert mgr.wait_ready(30) == []
        status = mgr.status()[0]
        assert status.state == "ready" and {"nap", "echo", "fail"} <= set(status.tools)
        teps, _ = teps_for(registry, tmp_path)
        result = teps.execute_tool(ToolRequest("h1", "mcp__remote__echo", {"text": "over http"}))
        assert result.status == "success" and "over http" in json.dumps(result.data)
        failed = teps.execute_tool(ToolRequest("h2", "mcp__remote__fail", {}))
        assert failed.status == "error" and "reported an error" in failed.data["error_message"]
    finally:
        mgr.close()
