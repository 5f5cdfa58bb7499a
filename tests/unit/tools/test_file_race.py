"""readFile and writeFile reach paths beneath the workspace without following a symlink swapped in meanwhile,
and refuse a FIFO or device at once (framework_core/tools/safe_open.py)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from framework_core.config.models import TepsSettings
from framework_core.core.approval import ScriptedApprover
from framework_core.errors import ToolArgumentError, ToolError
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine
from framework_core.tools import safe_open
from framework_core.tools.base import ToolContext
from framework_core.tools.builtin import read_handler, write_handler
from framework_core.tools.files import atomic_write

SECRET = "DECOY-SECRET-not-from-the-workspace"


def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws, settings=TepsSettings(), env={})


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "docs").mkdir(parents=True)
    outside.mkdir()
    (ws / "docs" / "notes.txt").write_text("workspace notes\n")
    (outside / "notes.txt").write_text(SECRET + "\n")
    return ws, outside


def _swapper(ws: Path, outside: Path, stop: threading.Event) -> None:
    """Flip `ws/link` between the workspace's docs folder and a decoy folder outside, as fast as it can."""
    link, tmp = ws / "link", ws / ".link-new"
    while not stop.is_set():
        for target in (ws / "docs", outside):
            try:
                os.symlink(target, tmp)
                os.replace(tmp, link)
            except FileExistsError:
                os.unlink(tmp)


@pytest.mark.parametrize("fallback", [False, True], ids=["openat2", "component-walk"])
def test_a_swapped_symlink_never_returns_the_decoy(layout: tuple[Path, Path], fallback: bool,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ws, outside = layout
    if fallback:
        monkeypatch.setattr(safe_open, "_openat2_state", [False])
    os.symlink(ws / "docs", ws / "link")
    teps = TEPSEngine({"command_timeout_s": 10}, workspace=ws, approver=ScriptedApprover(["n"] * 400),
                      events=lambda e: None)
    stop = threading.Event()
    swapper = threading.Thread(target=_swapper, args=(ws, outside, stop), daemon=True)
    swapper.start()
    contents, statuses = [], set()
    try:
        for i in range(200):
            res = teps.execute(ToolRequest(f"r{i}", "readFile", {"path": "link/notes.txt"}, "brief"))
            statuses.add(res.status)
            contents.append(str(res.data))
    finally:
        stop.set()
        swapper.join(timeout=10)
    assert not any(SECRET in c for c in contents)
    assert any("workspace notes" in c for c in contents), "no read went through: the test proved nothing"
    assert len(statuses) > 1, "the symlink never pointed outside during a read: the race was not exercised"


def test_a_fifo_is_refused_at_once(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    os.mkfifo(ws / "notes.txt")
    started = time.monotonic()
    with pytest.raises(ToolError, match="FIFO"):
        read_handler({"path": "notes.txt"}, ctx(ws))
    with pytest.raises(ToolError, match="FIFO"):
        write_handler({"path": "notes.txt", "content": "x", "mode": "a"}, ctx(ws))
    assert time.monotonic() - started < 5
    assert (ws / "notes.txt").is_fifo()


def test_a_device_is_refused(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    with pytest.raises(ToolError, match="device"):
        read_handler({"path": "/dev/zero"}, ctx(ws))


def test_a_symlink_inside_leading_out_is_refused_before_anyone_is_asked(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    os.symlink(outside, ws / "out")
    with pytest.raises(ToolArgumentError, match="leads outside the workspace"):
        read_handler({"path": "out/notes.txt"}, ctx(ws))
    with pytest.raises(ToolArgumentError, match="leads outside the workspace"):
        write_handler({"path": "out/notes.txt", "content": "x"}, ctx(ws))
    assert (outside / "notes.txt").read_text() == SECRET + "\n"


@pytest.mark.parametrize("fallback", [False, True], ids=["openat2", "component-walk"])
def test_symlinks_that_stay_inside_are_followed(layout: tuple[Path, Path], fallback: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ws, outside = layout
    if fallback:
        monkeypatch.setattr(safe_open, "_openat2_state", [False])
    os.symlink("../docs", ws / "docs" / "again")
    fd = safe_open.open_for_reading(ws, "docs/again/again/notes.txt")
    with os.fdopen(fd) as fh:
        assert fh.read() == "workspace notes\n"
    os.symlink("../../outside/notes.txt", ws / "docs" / "sneak")
    with pytest.raises(safe_open.OutsideWorkspace):
        safe_open.open_for_reading(ws, "docs/sneak")
    with pytest.raises(safe_open.OutsideWorkspace):
        safe_open.open_for_reading(ws, "../outside/notes.txt")


@pytest.mark.parametrize("fallback", [False, True], ids=["openat2", "component-walk"])
def test_a_write_through_a_swapped_folder_does_not_land_outside(layout: tuple[Path, Path], fallback: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ws, outside = layout
    if fallback:
        monkeypatch.setattr(safe_open, "_openat2_state", [False])
    os.rename(ws / "docs", ws / "docs-away")
    os.symlink(outside, ws / "docs")  # swapped after the path was checked as ws/docs/notes.txt
    with pytest.raises(safe_open.OutsideWorkspace):
        atomic_write(ws / "docs" / "notes.txt", b"overwritten", root=ws)
    assert (outside / "notes.txt").read_text() == SECRET + "\n"
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]
    atomic_write(ws / "new" / "deep" / "f.txt", b"made", root=ws)  # missing folders are made beneath
    assert (ws / "new" / "deep" / "f.txt").read_bytes() == b"made"
