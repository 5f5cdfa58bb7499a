"""A `-p` run that ran an approved command in the sandbox leaves TMPDIR as it found it: the sandbox's runtime
folder (overlay scratch, seccomp filter) is removed when the session closes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from framework_core.sandbox.probe import probe
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")


def test_a_p_run_with_an_approved_command_leaves_tmpdir_empty(outside_tmp: Path) -> None:
    ws, home, tmpdir = outside_tmp / "ws", outside_tmp / "home", outside_tmp / "tmpdir"
    for d in (ws, home, tmpdir):
        d.mkdir()
    cmd = "touch made.txt"
    with FakeOpenAIServer() as server:
        server.enqueue(Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
            "command": cmd, "icerc_full_text": f"Intent: x\nCommand: {cmd}"}, id="c1")]), Reply(text="done"))
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                    "XDG_DATA_HOME": str(home / ".local" / "share"), "TMPDIR": str(tmpdir),
                    "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url})
        done = subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "-p", "make it",
                               "--allow", "touch"], cwd=ws, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (ws / "made.txt").exists(), done.stderr
    assert sorted(os.listdir(tmpdir)) == []
