"""Twelve offline everyday workflows (a venv with a local wheel, npm install of a local package and npm test, make,
git branch/commit/merge/stash, mv, a cache write under ~/.cache, a script made executable and run, tar, a new
repository with a commit, sed -i) asked for by a scripted model in ONE `laca -p --permission-mode auto` run land
as a direct `bash -c` run of the same commands in a copy of the workspace (docs/ARCHITECTURE.md, "Two layers of
safety"). HOME is a real folder outside /tmp holding a .gitconfig; the direct run gets a copy of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from framework_core.sandbox.probe import probe
from tests import workflow_rig as rig

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")


def test_at_least_eleven_of_the_twelve_offline_workflows_land_as_a_direct_run(outside_tmp: Path) -> None:
    missing = [p for p in ("git", "make", "cc", "npm", "node", "tar") if shutil.which(p) is None]
    if missing:
        pytest.skip(f"the workflows need {', '.join(missing)}")
    flows = rig.OFFLINE
    assert len(flows) == 12
    home, ws = rig.make_home(outside_tmp / "home"), outside_tmp / "ws"
    ws.mkdir()
    rig.build_workspace(ws, home)
    direct_ws, direct_home = outside_tmp / "dire", outside_tmp / "dhom"
    rig.copy_tree(ws, direct_ws)
    rig.copy_tree(home, direct_home)
    commands = [c for f in flows for c in f.commands]
    assert rig.run_direct(direct_ws, direct_home, tuple(commands)) == [0] * len(commands)

    done = rig.run_laca_oneshot(ws, home, commands, "--permission-mode", "auto")

    assert "declined" not in done.stderr, done.stderr  # offline work needs no approval in auto mode
    assert done.stderr.count("laca: auto · sandboxed") == len(commands), done.stderr
    not_landed = {}
    for flow in flows:
        diff = rig.differences(rig.snapshot(ws / flow.folder, {str(ws): "<WS>", str(home): "<HOME>"}, home),
                               rig.snapshot(direct_ws / flow.folder, {str(direct_ws): "<WS>",
                                                                      str(direct_home): "<HOME>"}, direct_home))
        if diff:
            not_landed[flow.name] = diff
    assert len(not_landed) <= 1, f"not landed as a direct run: {not_landed}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, done.stderr
