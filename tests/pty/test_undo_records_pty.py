"""Undo records checked before they are believed, as a user meets them: a file write in one `-p` run, the record
damaged by hand, then `laca --continue` and `/undo` in the REPL. The damaged record names a decoy file in another
temporary folder, never a real system path (docs/ARCHITECTURE.md, "Two layers of safety")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.fakes.script import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "forge>"


def write_once(workspace: Path, fake_openai) -> Path:
    """`-p` with accept-edits writes a.txt (old -> new); returns the undo entry's folder."""
    fake_openai._queue.clear()
    (workspace / "a.txt").write_text("old\n")
    fake_openai.enqueue(Reply(tool_calls=[ToolCallSpec("writeFile", {
        "path": "a.txt", "content": "new\n", "icerc_full_text": "Intent: write"})]), Reply(text="Written."))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_openai.base_url})
    done = subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--provider", "openai",
                           "--permission-mode", "accept-edits", "-p", "write a.txt"], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and (workspace / "a.txt").read_text() == "new\n", done.stderr
    [records] = Path(os.environ["XDG_DATA_HOME"]).rglob("*.undo/000001/records.json")
    return records.parent


def undo_in_the_repl(spawn, expect: str) -> None:
    child = spawn("--continue")
    child.expect_exact(PROMPT)
    child.sendline("/undo")
    child.expect_exact(expect)
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_an_undo_record_naming_a_decoy_outside_the_workspace_leaves_it_alone(
        spawn, fake_openai, workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    decoy = tmp_path_factory.mktemp("elsewhere") / "decoy.txt"
    decoy.write_text("decoy: must stay\n")
    before = (decoy.read_bytes(), os.lstat(decoy).st_mode, os.lstat(decoy).st_mtime_ns)
    entry = write_once(workspace, fake_openai)
    records = json.loads((entry / "records.json").read_text())
    records[0]["path"] = str(decoy)
    (entry / "records.json").write_text(json.dumps(records))
    undo_in_the_repl(spawn, "damaged")
    assert (decoy.read_bytes(), os.lstat(decoy).st_mode, os.lstat(decoy).st_mtime_ns) == before
    assert (workspace / "a.txt").read_text() == "new\n"
    assert list(entry.parent.glob("000001.damaged-*"))  # set aside whole, not deleted


def test_an_undo_entry_whose_saved_copies_are_gone_keeps_the_current_file(
        spawn, fake_openai, workspace: Path) -> None:
    entry = write_once(workspace, fake_openai)
    copies = [p for p in (entry / "blobs").iterdir()]
    assert copies
    for copy in copies:
        copy.unlink()
    undo_in_the_repl(spawn, "damaged")
    assert (workspace / "a.txt").read_text() == "new\n"
