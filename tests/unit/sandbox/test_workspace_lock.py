"""The workspace's lock: held across processes, waited for a bounded time (and said), never through a symlink."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from framework_core.sandbox.workspace_lock import WAITING, WorkspaceBusy, WorkspaceLock, lock_path

HOLD = ("import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'4242 holding\\n')\n"
        "print('held', flush=True); time.sleep(float(sys.argv[2]))\n")


def _holder(path: Path, seconds: float) -> subprocess.Popen[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_a_second_session_waits_says_so_then_gives_up_naming_the_holder(tmp_path: Path) -> None:
    path = lock_path(tmp_path / "state", tmp_path / "ws")
    child = _holder(path, 30)
    try:
        lock = WorkspaceLock(path, wait_s=0.3)
        said: list[str] = []
        lock.on_wait = said.append
        with pytest.raises(WorkspaceBusy) as caught:
            with lock.hold("echo x"):
                pass
        assert said == [WAITING]
        assert "LACA process 4242" in str(caught.value.strerror) and "nothing of this change was applied" in str(
            caught.value.strerror)
    finally:
        child.kill()
        child.wait()


def test_the_lock_is_had_once_the_other_session_lets_go(tmp_path: Path) -> None:
    path = lock_path(tmp_path / "state", tmp_path / "ws")
    child = _holder(path, 0.5)
    lock = WorkspaceLock(path, wait_s=60)
    with lock.hold("second"):
        assert child.poll() is not None  # the holder had ended
        with lock.hold("re-entered by the same thread"):
            pass
    assert path.read_text().split()[0].isdigit()
    child.wait()


def test_a_symlink_in_place_of_the_lock_is_not_followed(tmp_path: Path) -> None:
    path = lock_path(tmp_path / "state", tmp_path / "ws")
    path.parent.mkdir(parents=True)
    decoy = tmp_path / "decoy"
    decoy.write_text("untouched\n")
    path.symlink_to(decoy)
    with pytest.raises(WorkspaceBusy, match="symlink"):
        with WorkspaceLock(path).hold():
            pass
    assert decoy.read_text() == "untouched\n"
