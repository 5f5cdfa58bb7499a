"""What tests wait on and which processes are theirs.

A test waits on the condition it needs (a file, a port, a process, a value), never on a fixed time; and it
looks only at the processes it started: the descendants of its own child, found through /proc.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], object], timeout: float = 10.0, interval: float = 0.05) -> bool:
    """Poll `condition` until it is truthy (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def wait_for(condition: Callable[[], T], timeout: float = 20.0, what: str = "the condition",
             interval: float = 0.05) -> T:
    """Poll `condition` until it is truthy and return its value; fail the test naming `what` when it never is."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def descendants(root: int, marker: str = "") -> list[int]:
    """Live processes below `root` (children, their children, …) whose command line contains `marker`.

    The tree is built from every process's parent pid in /proc/<pid>/stat (the kernel's
    /proc/<pid>/task/*/children is not built into every kernel). Processes in a sandbox's PID namespace
    are listed by their pids here, which is what os.kill and /proc take."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[0] != "Z":
            children.setdefault(stat[1], []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        if marker in cmdline(pid):
            found.append(pid)
    return sorted(found)
