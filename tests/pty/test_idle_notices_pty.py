"""MCP notices while the prompt waits, in a real pseudo-terminal: a server that dies while the user is typing is
reported above the prompt within seconds, its restart too, the typed line stays as it was, and neither notice
is said again at the next request."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pexpect

from tests.fakes.script import Reply
from tests.integration.mcp_servers import CASES

PROMPT = "forge>"


def descendants(root: int, marker: str) -> list[int]:
    """Processes under `root` (a LACA the test started) run by Python whose command line contains `marker`."""
    parents: dict[int, int] = {}
    lines: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                lines[int(entry.name)] = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
    found = []
    for pid, argv in lines.items():
        up = pid
        while up in parents and up not in (root, 0, 1):
            up = parents[up]
        if up == root and "python" in os.path.basename(argv[0]) and any(marker in a for a in argv):
            found.append(pid)
    return found


def wait_until_ready(child: pexpect.spawn) -> None:
    for _ in range(100):  # each round waits on the table /mcp prints
        child.sendline("/mcp")
        if child.expect([r"cases +ready", r"cases +(starting|restarting)"]) == 0:
            child.expect_exact(PROMPT)
            return
    raise AssertionError("the cases server never became ready")


def test_a_server_dying_while_idle_is_said_above_the_prompt_and_the_typed_line_stays(
        spawn, fake_openai, workspace: Path) -> None:
    (workspace / "framework_config.yaml").write_text(
        f"mcp_servers:\n  cases:\n    command: {sys.executable}\n    args: [{CASES}]\n")
    child = spawn(no_mcp=False)
    child.expect_exact(PROMPT)
    wait_until_ready(child)
    child.send("half a thought")
    child.expect_exact("half a thought")
    for pid in descendants(child.pid, "cases_server.py"):
        os.kill(pid, signal.SIGKILL)
    child.expect_exact("MCP server 'cases' stopped (the server's process exited); restarting it in 1 s", timeout=10)
    child.expect_exact("half a thought")  # the prompt drawn again below the notice, with the typed text
    child.expect_exact("and was restarted", timeout=10)
    child.expect_exact("half a thought")
    fake_openai.enqueue(Reply(text="Noted."))
    child.send(" done\r")
    child.expect_exact("Noted.")
    said_again = "MCP server 'cases'" in child.before
    assert (fake_openai.sent_messages()[-1]["content"], said_again) == ("half a thought done", False)
