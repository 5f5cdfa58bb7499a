"""A broken workspace config does not end the REPL: LACA starts without that file, says which file and line,
and answers the message typed at once (before, LACA exited a second after drawing the prompt and the rest of
the line landed in the user's shell)."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.fakes.script import Reply

PROMPT = "forge>"


def test_a_broken_workspace_config_is_said_and_the_repl_answers(spawn, fake_openai, workspace: Path) -> None:
    (workspace / "framework_config.yaml").write_text("teps_settings:\n  command_timeout_s: [1\n")
    fake_openai.enqueue(Reply(text="Still here."))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("are you there")
    child.expect_exact("LACA started without")
    child.expect_exact("Still here.")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
