"""editFile and applyPatch through TEPS: found by their schemas, judged as writes, shown as diffs, undone exactly,
refused with results the model can act on, and never half-written."""

from __future__ import annotations

import json
import os
from pathlib import Path

from framework_core.core.approval import ScriptedApprover
from framework_core.lial_core import ToolRequest, ToolResult
from framework_core.teps import TEPSEngine


def engine(ws: Path, answers=()) -> tuple[TEPSEngine, ScriptedApprover]:
    approver = ScriptedApprover(answers)
    return TEPSEngine({"command_timeout_s": 10}, workspace=ws, approver=approver), approver


def tool_with(teps: TEPSEngine, *props: str) -> str:
    """The tool whose schema has these properties (found by its schema, not its name)."""
    found = [s.name for s in teps.registry.schemas() if set(props) <= set(s.parameters["properties"])]
    assert len(found) == 1, found
    return found[0]


def call(teps: TEPSEngine, tool: str, **args) -> ToolResult:
    return teps.execute(ToolRequest("c1", tool, args, f"Intent: change {args.get('path', 'files')}"))


def read(teps: TEPSEngine, path: str) -> ToolResult:
    return call(teps, "readFile", path=path)


def crlf_file(ws: Path, n: int = 3000) -> bytes:
    data = "".join(f"line {i} of the file\r\n" for i in range(1, n + 1)).encode()
    (ws / "big.txt").write_bytes(data)
    return data


def test_one_line_in_a_3000_line_crlf_file_lands_exactly_and_undo_restores_it(workspace: Path) -> None:
    original = crlf_file(workspace)
    os.chmod(workspace / "big.txt", 0o640)
    teps, approver = engine(workspace, ["y"])
    edit = tool_with(teps, "old_string", "new_string")
    assert read(teps, "big.txt").status == "success"
    args = {"path": "big.txt", "old_string": "line 1500 of the file", "new_string": "line 1500, changed"}
    request = {"tool_name": edit, "parameters": args, "icerc_full_text": "Intent: change line 1500 of big.txt"}
    assert len(json.dumps(request).encode()) < 2048
    res = call(teps, edit, **args)
    assert res.status == "success", res.data
    after = (workspace / "big.txt").read_bytes()
    assert after == original.replace(b"line 1500 of the file\r\n", b"line 1500, changed\r\n")
    assert oct((workspace / "big.txt").stat().st_mode & 0o777) == "0o640"
    body = approver.seen[0].preview.body
    assert "-line 1500 of the file" in body and "+line 1500, changed" in body
    assert approver.seen[0].preview.lexer == "diff"
    text = res.to_model_text()
    assert len(text) < 300 and "1 line added, 1 removed" in text and "line 1500" in text
    teps.undo.revert(1)
    assert (workspace / "big.txt").read_bytes() == original


def test_a_multi_line_edit_in_a_crlf_file_takes_the_file_s_line_endings(workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    teps, _ = engine(workspace, ["y"])
    read(teps, "w.txt")
    res = call(teps, "editFile", path="w.txt", old_string="a\nb\n", new_string="a\nB\nb2\n")
    assert res.status == "success", res.data
    assert (workspace / "w.txt").read_bytes() == b"a\r\nB\r\nb2\r\nc\r\n"


def test_found_twice_is_refused_with_the_count_and_lines(workspace: Path) -> None:
    (workspace / "t.py").write_text("x = 1\ny = 2\nx = 1\n")
    teps, approver = engine(workspace)
    read(teps, "t.py")
    res = call(teps, "editFile", path="t.py", old_string="x = 1", new_string="x = 3")
    assert res.status == "error" and "found 2 times" in res.data["error_message"]
    assert "lines 1, 3" in res.data["error_message"] and approver.seen == []
    assert (workspace / "t.py").read_text() == "x = 1\ny = 2\nx = 1\n"


def test_replace_all_changes_every_occurrence(workspace: Path) -> None:
    (workspace / "t.py").write_text("x = 1\ny = 2\nx = 1\n")
    teps, _ = engine(workspace, ["y"])
    read(teps, "t.py")
    res = call(teps, "editFile", path="t.py", old_string="x = 1", new_string="x = 3", replace_all=True)
    assert res.status == "success" and (workspace / "t.py").read_text() == "x = 3\ny = 2\nx = 3\n"


def test_changed_on_disk_after_the_read_is_refused_named_and_the_change_kept(workspace: Path) -> None:
    (workspace / "c.txt").write_text("one\ntwo\n")
    teps, approver = engine(workspace)
    read(teps, "c.txt")
    (workspace / "c.txt").write_text("one\ntwo\nthree by the user\n")
    res = call(teps, "editFile", path="c.txt", old_string="two", new_string="2")
    assert res.status == "error" and "c.txt changed on disk" in res.data["error_message"]
    assert (workspace / "c.txt").read_text() == "one\ntwo\nthree by the user\n" and approver.seen == []


def test_never_read_is_refused(workspace: Path) -> None:
    (workspace / "n.txt").write_text("one\n")
    teps, _ = engine(workspace)
    res = call(teps, "editFile", path="n.txt", old_string="one", new_string="1")
    assert res.status == "error" and "has not been read in this session" in res.data["error_message"]


def test_absent_names_the_nearest_line(workspace: Path) -> None:
    (workspace / "n.py").write_text("def main():\n    return compute(1, 2)\n")
    teps, _ = engine(workspace)
    read(teps, "n.py")
    res = call(teps, "editFile", path="n.py", old_string="return compute(1, 3)", new_string="pass")
    assert "nearest line is 2" in res.data["error_message"]


def test_binary_huge_and_outside_files_are_refused_clearly(workspace: Path, tmp_path: Path) -> None:
    (workspace / "b.bin").write_bytes(b"abc\0def\n")
    with open(workspace / "huge.txt", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    (tmp_path / "out.txt").write_text("x\n")
    teps, approver = engine(workspace)
    assert "binary" in call(teps, "editFile", path="b.bin", old_string="abc", new_string="x").data["error_message"]
    huge = call(teps, "editFile", path="huge.txt", old_string="a", new_string="b").data["error_message"]
    assert "more than the edit tools take" in huge
    outside = call(teps, "editFile", path=str(tmp_path / "out.txt"), old_string="x", new_string="y")
    assert "outside the workspace" in outside.data["error_message"]
    assert approver.seen == [] and (tmp_path / "out.txt").read_text() == "x\n"
    assert (workspace / "b.bin").read_bytes() == b"abc\0def\n"


def test_accept_edits_runs_an_edit_without_asking_but_a_control_path_still_asks(workspace: Path) -> None:
    (workspace / "f.txt").write_text("a\n")
    (workspace / ".mcp.json").write_text("{}\n")
    teps, approver = engine(workspace, ["n"])
    teps.mode = "accept-edits"
    read(teps, "f.txt")
    read(teps, ".mcp.json")
    assert call(teps, "editFile", path="f.txt", old_string="a", new_string="b").status == "success"
    assert approver.seen == []
    res = call(teps, "editFile", path=".mcp.json", old_string="{}", new_string='{"mcpServers": {}}')
    assert res.status == "declined_by_user" and approver.seen[0].control_note


PATCH_OK = """*** Begin Patch
*** Update File: a.py
@@ def f():
-    return 1
+    return 2
*** Add File: new/n.md
+hello
*** Update File: old.txt
*** Move to: moved.txt
@@
 keep
-drop
*** Delete File: gone.txt
*** End Patch"""


def patch_files(ws: Path) -> dict[str, bytes]:
    files = {"a.py": b"def f():\n    return 1   \n", "old.txt": b"keep\ndrop\n", "gone.txt": b"bye\n",
             "b.py": b"x = 1\n"}
    for name, data in files.items():
        (ws / name).write_bytes(data)
    return files


def test_a_patch_adds_updates_moves_and_deletes_as_one_undo_entry(workspace: Path) -> None:
    files = patch_files(workspace)
    teps, approver = engine(workspace, ["y"])
    tool = tool_with(teps, "patch")
    for name in ("a.py", "old.txt"):
        read(teps, name)
    res = call(teps, tool, patch=PATCH_OK)
    assert res.status == "success", res.data
    assert (workspace / "a.py").read_text() == "def f():\n    return 2\n"
    assert (workspace / "new/n.md").read_text() == "hello\n" and (workspace / "moved.txt").read_text() == "keep\n"
    assert not (workspace / "old.txt").exists() and not (workspace / "gone.txt").exists()
    assert "+    return 2" in approver.seen[0].preview.body and len(approver.seen) == 1
    assert "4 files" in res.to_model_text() and len(res.to_model_text()) < 400
    teps.undo.revert(1)
    assert {n: (workspace / n).read_bytes() for n in files} == files
    assert not (workspace / "new/n.md").exists() and not (workspace / "moved.txt").exists()


def test_a_patch_whose_second_hunk_fails_leaves_every_file_unchanged(workspace: Path) -> None:
    files = patch_files(workspace)
    teps, approver = engine(workspace)
    read(teps, "a.py")
    read(teps, "b.py")
    patch = ("*** Begin Patch\n*** Update File: a.py\n@@\n-    return 1\n+    return 9\n*** Update File: b.py\n"
             "@@\n-x = 2\n+x = 3\n*** End Patch")
    res = call(teps, "applyPatch", patch=patch)
    assert res.status == "error" and "b.py: hunk 1" in res.data["error_message"]
    assert "x = 2" in res.data["error_message"] and "Nothing was changed" in res.data["error_message"]
    assert {n: (workspace / n).read_bytes() for n in files} == files and approver.seen == []


def test_context_matching_tolerates_lookalike_punctuation_never_line_numbers(workspace: Path) -> None:
    (workspace / "q.txt").write_text("say \u201chello\u201d \u2014 twice\nend\n")
    teps, _ = engine(workspace, ["y"])
    read(teps, "q.txt")
    patch = ('*** Begin Patch\n*** Update File: q.txt\n@@ -1,2 +1,2 @@\n-say "hello" - twice\n+say hi\n end\n'
             "*** End Patch")
    res = call(teps, "applyPatch", patch=patch)
    assert res.status == "success", res.data
    assert (workspace / "q.txt").read_text() == "say hi\nend\n"


def test_malformed_patches_and_paths_outside_are_refused_before_asking(workspace: Path, tmp_path: Path) -> None:
    teps, approver = engine(workspace)
    bad = call(teps, "applyPatch", patch="*** Begin Patch\n*** Frobnicate: x\n*** End Patch").data["error_message"]
    assert "line 2 of the patch" in bad and "Add File" in bad
    assert "ends with the line '*** End Patch'" in call(teps, "applyPatch", patch="*** Begin Patch\n").data[
        "error_message"]
    out = call(teps, "applyPatch", patch=f"*** Begin Patch\n*** Add File: {tmp_path}/x.txt\n+x\n*** End Patch")
    assert "outside the workspace" in out.data["error_message"] and not (tmp_path / "x.txt").exists()
    (workspace / "here.txt").write_text("x\n")
    exists = call(teps, "applyPatch", patch="*** Begin Patch\n*** Add File: here.txt\n+y\n*** End Patch")
    assert "already exists" in exists.data["error_message"] and approver.seen == []


def test_read_file_numbers_lines_on_request(workspace: Path) -> None:
    (workspace / "r.txt").write_text("alpha\nbeta\n")
    teps, _ = engine(workspace)
    assert read(teps, "r.txt").data["content"] == "alpha\nbeta\n"  # as before, for every existing caller
    assert call(teps, "readFile", path="r.txt", line_numbers=True).data["content"] == "1\talpha\n2\tbeta\n"
    assert call(teps, "readFile", path="r.txt", offset=2, line_numbers=True).data["content"] == "2\tbeta\n"


def test_lines_copied_with_their_numbers_still_edit_the_file(workspace: Path) -> None:
    (workspace / "r.txt").write_text("alpha\nbeta\ngamma\n")
    teps, _ = engine(workspace, ["y"])
    numbered = call(teps, "readFile", path="r.txt", line_numbers=True).data["content"].splitlines()
    res = call(teps, "editFile", path="r.txt", old_string=numbered[1], new_string="2\tBETA")
    assert res.status == "success", res.data
    assert (workspace / "r.txt").read_text() == "alpha\nBETA\ngamma\n"


def test_a_new_conversation_has_read_nothing(workspace: Path) -> None:
    (workspace / "n.txt").write_text("one\n")
    teps, _ = engine(workspace)
    read(teps, "n.txt")
    teps.forget_reads()
    res = call(teps, "editFile", path="n.txt", old_string="one", new_string="1")
    assert "has not been read in this session" in res.data["error_message"]


def test_encoding_bom_and_final_newline_are_kept(workspace: Path) -> None:
    (workspace / "u.txt").write_bytes("\ufeffa\nb\n".encode("utf-8"))
    (workspace / "l.txt").write_bytes("caf\xe9\nend\n".encode("latin-1"))
    teps, _ = engine(workspace, ["y", "y", "y"])
    read(teps, "u.txt")
    assert call(teps, "editFile", path="u.txt", old_string="b\n", new_string="B").status == "success"
    assert (workspace / "u.txt").read_bytes() == "\ufeffa\nB\n".encode("utf-8")
    read(teps, "l.txt")
    refused = call(teps, "editFile", path="l.txt", old_string="end", new_string="fin").data["error_message"]
    assert "not utf-8 text" in refused and "encoding" in refused
    res = call(teps, "editFile", path="l.txt", old_string="end", new_string="fin", encoding="latin-1")
    assert res.status == "success" and (workspace / "l.txt").read_bytes() == "caf\xe9\nfin\n".encode("latin-1")


def test_a_patch_touching_a_control_path_asks_every_time_and_offers_no_always(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / ".mcp.json").write_text("{}\n")
    teps, approver = engine(workspace, ["n"])
    teps.mode = "accept-edits"
    read(teps, "a.txt")
    read(teps, ".mcp.json")
    patch = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: .mcp.json\n@@\n-{}\n+{\"x\": 1}\n"
             "*** End Patch")
    assert call(teps, "applyPatch", patch=patch).status == "declined_by_user"
    req = approver.seen[0]
    assert ".mcp.json" in req.control_note and req.grant_options == [] and len(req.preview.paths) == 2
    assert (workspace / "a.txt").read_text() == "a\n"


def test_accept_edits_covers_a_multi_file_patch_inside_the_workspace(workspace: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text(f"{name}\n")
    teps, approver = engine(workspace)
    teps.mode = "accept-edits"
    for name in ("a.txt", "b.txt"):
        read(teps, name)
    patch = "*** Begin Patch\n*** Update File: a.txt\n-a.txt\n+A\n*** Update File: b.txt\n-b.txt\n+B\n*** End Patch"
    assert call(teps, "applyPatch", patch=patch).status == "success" and approver.seen == []
    assert (workspace / "a.txt").read_text() == "A\n" and (workspace / "b.txt").read_text() == "B\n"


def test_auto_mode_asks_before_an_edit_or_patch_of_a_file_that_runs_with_nothing_named(workspace: Path) -> None:
    (workspace / "site.pth").write_text("import a\n")
    (workspace / "a.txt").write_text("a\n")
    teps, approver = engine(workspace, ["n", "n"])
    teps.mode = "auto"
    read(teps, "site.pth")
    read(teps, "a.txt")
    assert call(teps, "editFile", path="site.pth", old_string="a", new_string="b").status == "declined_by_user"
    patch = ("*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** Update File: site.pth\n-import a\n+import c\n"
             "*** End Patch")
    assert call(teps, "applyPatch", patch=patch).status == "declined_by_user"
    assert len(approver.seen) == 2 and all("Auto mode asks" in (r.control_note or "") for r in approver.seen)
    assert "site.pth" in (approver.seen[1].control_note or "")
    assert (workspace / "site.pth").read_text() == "import a\n" and (workspace / "a.txt").read_text() == "a\n"
