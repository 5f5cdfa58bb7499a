"""editFile in the REPL as a user meets it: the model reads a CRLF file and changes one line of it, the approval
panel shows the - and + lines, `y` lands exactly that line, `/undo` puts the file back byte for byte."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.fakes.script import Reply, ToolCallSpec

PROMPT = "forge>"


def test_an_edit_is_shown_as_a_diff_approved_landed_and_undone(spawn, fake_openai, workspace: Path) -> None:
    original = "".join(f"line {i}\r\n" for i in range(1, 3001)).encode()
    (workspace / "big.txt").write_bytes(original)
    edit = {"path": "big.txt", "old_string": "line 1500", "new_string": "line 1500 edited",
            "icerc_full_text": "Intent: change line 1500 of big.txt"}
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("readFile", {"path": "big.txt", "offset": 1495, "limit": 10,
                                                                    "icerc_full_text": "Intent: read big.txt"})]),
                        Reply(tool_calls=[ToolCallSpec("editFile", edit)]), Reply(text="Changed line 1500."))
    child = spawn()
    child.expect_exact(PROMPT)
    child.sendline("change line 1500 of big.txt")
    child.expect_exact("Edit file big.txt (+1")
    child.expect_exact("-line 1500")
    child.expect_exact("+line 1500 edited")
    child.expect_exact("Allow?")
    child.sendline("y")
    child.expect_exact("Changed line 1500.")
    child.expect_exact(PROMPT)
    assert (workspace / "big.txt").read_bytes() == original.replace(b"line 1500\r\n", b"line 1500 edited\r\n")
    child.sendline("/undo")
    child.expect_exact("Undone: `editFile big.txt`")
    child.expect_exact(PROMPT)
    assert (workspace / "big.txt").read_bytes() == original
    child.sendline("/exit")
    child.expect(pexpect.EOF)
