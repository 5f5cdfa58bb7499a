"""MCP servers for the tests, and what the MCP tests share: paths, waiting on conditions, our own children."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from tests.waiting import alive, wait_for  # noqa: F401  (the MCP tests import them from here)

HERE = Path(__file__).parent
CASES = str(HERE / "cases_server.py")
SLOW = str(HERE / "slow_server.py")
DESCRIBED = str(HERE / "described_server.py")


def child_pids(marker: str) -> list[int]:
    """Processes this test process started (its direct children) whose command line contains `marker`."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z" and marker in cmdline:
            found.append(int(entry.name))
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served(args: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """A test server run over HTTP on `port`, up when its port answers; stopped (only it) at the end."""
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return proc.poll() is not None  # a server that died: stop waiting, the test will say why

    try:
        wait_for(listening, 30, f"the test server on port {port}")
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)
