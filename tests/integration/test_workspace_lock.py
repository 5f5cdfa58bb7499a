"""One writer per workspace, with two real LACA processes: each runs a sandboxed command writing the same 1,000
files at the same moment; all of one set lands or all of the other, and the session that did not land says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from framework_core.sandbox.probe import probe
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(not probe().available or not probe().overlay,
                                reason="no overlay sandbox on this machine: " + "; ".join(probe().missing()))


def test_two_sessions_landing_at_once_leave_one_whole_set(outside_tmp: Path) -> None:
    ws, home, go = outside_tmp / "ws", outside_tmp / "home", outside_tmp / "go"
    ws.mkdir()
    home.mkdir()
    for i in range(1, 1001):  # the files exist: both sets modify them
        (ws / f"f{i}").write_text("original\n")
    ready = [outside_tmp / f"ready-{tag}" for tag in "AB"]
    children = [subprocess.Popen([sys.executable, "-m", "tests.integration.lock_child", str(ws), str(home), str(go),
                                  str(r), tag], cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for r, tag in zip(ready, "AB", strict=True)]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in ready):
        assert time.monotonic() < deadline, "the child sessions did not start"
        assert all(c.poll() is None for c in children), [c.communicate() for c in children]
        time.sleep(0.05)
    go.write_text("go")  # both commands start now and run at the same time (each sleeps 1 s after writing)
    results = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    contents = {(ws / f"f{i}").read_text() for i in range(1, 1001)}
    assert contents in ({"A\n"}, {"B\n"}), f"a mixture landed: {sorted(contents)[:5]}"
    winner = "AB".index(contents.pop().strip())
    landed, refused = results[winner], results[1 - winner]
    assert landed["status"] == "success" and "1,000 files changed" in landed["data"]["changes"]
    assert refused["status"] == "error"
    assert "NOT applied" in refused["data"]["error_message"]
    assert "changed in the workspace while the command ran" in refused["data"]["error_message"]
