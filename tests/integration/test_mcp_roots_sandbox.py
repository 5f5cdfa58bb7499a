"""A sandboxed stdio MCP server has the workspace's access to the folders of its `roots:` setting (a grant shown
in the trust question): with `workspace: write` it writes them, and nowhere else outside the workspace. The folder
lives outside /tmp (the sandbox's /tmp is private, so a folder there would prove nothing), under the repository's
`.pytest-homes/`."""

from __future__ import annotations

import shutil
import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.app.wiring import build_agent
from framework_core.config.load import Overrides, load_config
from framework_core.core.approval import ScriptedApprover
from framework_core.core.session import open_session
from framework_core.lial_core import ToolRequest
from framework_core.sandbox.probe import probe
from tests.waiting import wait_for

PROBE = str(Path(__file__).with_name("mcp_servers") / "probe_server.py")
REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.mcp, pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")]


@pytest.fixture
def outside() -> Iterator[Path]:
    folder = REPO / ".pytest-homes" / f"roots-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize(("root", "write"), [(True, True), (True, False), (False, True)],
                         ids=["a-root-written", "a-root-read-only", "not-a-root"])
def test_a_sandboxed_server_writes_only_in_its_roots(workspace: Path, outside: Path, root: bool, write: bool) -> None:
    granted = root and write
    (workspace / "framework_config.yaml").write_text(
        f"mcp_servers:\n  probe:\n    command: {sys.executable}\n    args: [{PROBE!r}]\n    permission: always\n"
        + (f"    roots: [{str(outside)!r}]\n" if root else "") + ("    workspace: write\n" if write else ""))
    parts = build_agent(load_config(workspace, Overrides()), events=lambda e: None, approver=ScriptedApprover(),
                        session=open_session(workspace.parent / "data"))
    agent = parts.agent
    try:
        wait_for(lambda: "mcp__probe__probe" in agent.teps.registry, 60, "the probe server's tool")
        result = agent.teps.execute(ToolRequest("p", "mcp__probe__probe", {"outside": str(outside)}, "probe"))
    finally:
        agent.mcp.close()
    said = str(result.data.get("content") or result.data)
    assert ("wrote_outside=yes" in said, (outside / "planted.txt").exists()) == (granted, granted), said
