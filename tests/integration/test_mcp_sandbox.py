"""Stdio MCP servers start inside the sandbox: no capabilities, their own namespaces, nothing of LACA's
environment (API keys included), and no writes outside the workspace."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.lial_core import ToolRequest
from framework_core.sandbox.probe import probe
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.waiting import wait_for

PROBE = str(Path(__file__).with_name("mcp_servers") / "probe_server.py")
pytestmark = [pytest.mark.mcp, pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")]


def start(workspace: Path, *, sandboxed: bool, extra: str = ""):
    (workspace / "framework_config.yaml").write_text(
        f"mcp_servers:\n  probe:\n    command: {sys.executable}\n    args: [{PROBE!r}]\n    permission: always\n"
        f"    sandbox: {'true' if sandboxed else 'false'}\n{extra}")
    parts = build_agent(load_config(workspace, Overrides()), events=lambda e: None, approver=ScriptedApprover(),
                        session=open_session(workspace.parent / "data"))
    wait_for(lambda: "mcp__probe__probe" in parts.agent.teps.registry, 60, "the probe server's tool")
    return parts.agent


def report(agent, outside: Path, inside: str = "") -> dict[str, str]:
    result = agent.teps.execute(ToolRequest("p", "mcp__probe__probe", {"outside": str(outside), "inside": inside},
                                            "probe"))
    text = str(result.data.get("content") or result.data)
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "sandbox-false"])
def test_a_stdio_server_runs_confined_unless_configured_otherwise(workspace: Path, monkeypatch,
                                                                   sandboxed: bool) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-servers")
    outside = Path(tempfile.mkdtemp(prefix=".laca-test-", dir=os.path.expanduser("~")))
    agent = start(workspace, sandboxed=sandboxed)
    try:
        seen = report(agent, outside, str(workspace / "made-by-server.txt"))
    finally:
        agent.mcp.close()
    assert "OPENAI_API_KEY" not in seen["env"]  # the SDK's minimal environment either way
    if sandboxed:
        assert seen["CapEff"] == "0000000000000000" and seen["NoNewPrivs"] == "1"
        assert seen["userns"] != os.readlink("/proc/self/ns/user")
        assert seen["wrote_outside"].startswith("no") and not (outside / "planted.txt").exists()
        assert seen["wrote_inside"].startswith("no") and not (workspace / "made-by-server.txt").exists()
    else:
        assert seen["userns"] == os.readlink("/proc/self/ns/user")


def test_a_server_whose_entry_says_workspace_write_writes_the_workspace(workspace: Path) -> None:
    outside = Path(tempfile.mkdtemp(prefix=".laca-test-", dir=os.path.expanduser("~")))
    agent = start(workspace, sandboxed=True, extra="    workspace: write\n")
    try:
        seen = report(agent, outside, str(workspace / "made-by-server.txt"))
    finally:
        agent.mcp.close()
        shutil.rmtree(outside, ignore_errors=True)
    assert seen["wrote_inside"] == "yes" and (workspace / "made-by-server.txt").read_text() == "x"
    assert seen["wrote_outside"].startswith("no") and not (outside / "planted.txt").exists()


def test_a_sandboxed_server_gets_the_commands_home_and_environment(monkeypatch) -> None:
    """Writable caches from nothing (what `npx -y` and `uvx` need on their first run), no credential of the
    home, and the environment allowlist plus the server's own `env:`. The home is a real folder outside /tmp."""
    import uuid

    from framework_core.config.models import McpServerSettings
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.tools.base import ToolRegistry
    from framework_core.tools.mcp import McpManager

    base = Path(__file__).resolve().parents[2] / ".pytest-homes" / uuid.uuid4().hex[:12]
    home, ws, cache = base / "home", base / "ws", base / "cache"
    (home / ".config" / "sometool").mkdir(parents=True)
    (home / ".config" / "sometool" / "token").write_text("SOMETOOL-SECRET\n")
    ws.mkdir()
    sandbox = Sandbox("workspace-write", ws, home=home, cache_root=cache)
    settings = McpServerSettings(command=sys.executable, args=[PROBE], env={"SERVER_OWN": "1"})
    mgr = McpManager({"probe": settings}, ToolRegistry(), base / "logs", ws)
    mgr.wrapper = lambda name, s: sandbox.server_wrapper(network=s.network, program=(s.command, *s.args))
    mgr.environ = {"PATH": os.environ["PATH"], "HOME": str(home), "MY_SERVICE_PASS": "hunter2", "MYTOOL_X": "1"}
    mgr.keep_env = ("MYTOOL_*",)
    try:
        mgr.start()
        assert mgr.wait_ready(60) == [], mgr.status()
        result = mgr.call("probe", "home_probe", {"secret": str(home / ".config/sometool/token")})
        text = str(result)
        # what a command left in its caches (a planted npx package) is not in the server's
        (cache / ".npm" / "_npx").mkdir(parents=True, exist_ok=True)
        (cache / ".npm" / "_npx" / "planted.js").write_text("PLANTED-BY-A-COMMAND")
        planted = str(mgr.call("probe", "home_probe", {"secret": str(home / ".npm/_npx/planted.js")}))
    finally:
        mgr.close()
        sandbox.close()
    try:
        assert ".cache/probe/x=written" in text and ".npm/_cacache/x=written" in text, text
        servers_cache = cache.with_name("cache-servers")  # LACA's own, and not the commands' caches
        assert (servers_cache / ".cache" / "probe" / "x").read_text() == "cached"
        assert "PLANTED-BY-A-COMMAND" not in planted and "secret=unreadable" in planted
        assert not (home / ".cache").exists() and not (home / ".npm").exists()
        assert "SOMETOOL-SECRET" not in text and "secret=unreadable" in text
        assert "MY_SERVICE_PASS" not in text and "hunter2" not in text
        assert "MYTOOL_X" in text and "SERVER_OWN" in text
    finally:
        shutil.rmtree(base, ignore_errors=True)
