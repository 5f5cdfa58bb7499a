"""A sandboxed stdio MCP server has the workspace's access to the folders of its `roots:` setting (a grant shown
in the trust question): with `workspace: write` it writes them, in the empty home too, and nowhere else outside
the workspace; a credential folder is never a root. Home, workspace and roots are real folders outside /tmp (the
sandbox's /tmp is private, so folders there would prove nothing), under the repository's `.pytest-homes/`."""

from __future__ import annotations

import shutil
import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.config.models import McpServerSettings
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.tools.base import ToolRegistry
from framework_core.tools.mcp import McpManager
from framework_core.tools.mcp_resources import root_paths

PROBE = str(Path(__file__).with_name("mcp_servers") / "probe_server.py")
REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.mcp, pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")]


@pytest.fixture
def base() -> Iterator[Path]:
    folder = REPO / ".pytest-homes" / f"roots-{uuid.uuid4().hex[:12]}"
    for sub in ("home/notes", "home/.ssh", "ws", "outside", "cache"):
        (folder / sub).mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


CASES = [  # (roots, the folder written, workspace: write, written)
    (["{outside}"], "outside", True, True),
    (["{outside}"], "outside", False, False),
    ([], "outside", True, False),
    (["~/notes"], "home/notes", True, True),
    (["~/.ssh"], "home/.ssh", True, False),
]


@pytest.mark.parametrize(("roots", "target", "write", "written"), CASES,
                         ids=["a-root-written", "a-root-read-only", "not-a-root", "a-root-in-the-home",
                              "a-credential-folder-is-never-a-root"])
def test_a_sandboxed_server_writes_only_in_its_roots(base: Path, monkeypatch: pytest.MonkeyPatch, roots: list[str],
                                                     target: str, write: bool, written: bool) -> None:
    home, ws = base / "home", base / "ws"
    monkeypatch.setenv("HOME", str(home))
    sandbox = Sandbox("workspace-write", ws, home=home, cache_root=base / "cache")
    settings = McpServerSettings(command=sys.executable, args=[PROBE], workspace="write" if write else "read",
                                 roots=[r.format(outside=base / "outside") for r in roots])
    mgr = McpManager({"probe": settings}, ToolRegistry(), base / "logs", ws)
    mgr.wrapper = lambda name, s: sandbox.server_wrapper(network=False, write=s.workspace == "write",
                                                         roots=root_paths(s, ws), program=(s.command, *s.args))
    try:
        mgr.start()
        assert mgr.wait_ready(60) == [], mgr.status()
        said = str(mgr.call("probe", "probe", {"outside": str(base / target)}))
    finally:
        mgr.close()
        sandbox.close()
    assert ("wrote_outside=yes" in said, (base / target / "planted.txt").exists()) == (written, written), said
