"""The undo store on its own: file writes recorded without an overlay, exact restores, conflicts with
later edits, several entries at once, persistence for `--continue`, the size bound, interrupted applies."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from framework_core.sandbox.undo_store import UndoStore
from framework_core.tools.files import atomic_write
from tests.unit.sandbox.overlay_kit import diff_manifests, manifest

T0 = 1_600_000_000_000_000_000  # a fixed mtime, so "restored exactly" includes times


def write_file(store: UndoStore, path: Path, data: bytes) -> str | None:
    """What writeFile does through the store: pre-image, atomic write, commit."""
    entry = store.begin(f"writeFile {path.name}", "writeFile")
    entry.save_preimage(path)
    atomic_write(path, data)
    return entry.commit()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    notes = ws / "docs" / "notes.txt"
    notes.write_text("first\n")
    notes.chmod(0o640)
    os.utime(notes, ns=(T0, T0))
    return ws


def test_a_file_write_is_undone_exactly(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    notes = ws / "docs" / "notes.txt"
    before = manifest(ws, times=True)
    assert write_file(store, notes, b"second\n") is None
    [info] = store.entries()
    assert (info.label, info.source, info.state, info.paths) == ("writeFile notes.txt", "writeFile", "committed", 1)
    result = store.revert()
    assert not result.conflicts and result.summary() == "Undone: `writeFile notes.txt` (1 path restored)."
    assert manifest(ws, times=True) == before and store.entries() == []
    assert store.revert().summary() == "Nothing to undo."


def test_undoing_a_new_file_removes_it_and_the_folders_it_needed(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    before = manifest(ws, times=True)
    write_file(store, ws / "new" / "deep" / "file.txt", b"hello\n")
    assert (ws / "new" / "deep" / "file.txt").read_bytes() == b"hello\n"
    assert not store.revert().conflicts
    assert manifest(ws, times=True) == before


def test_a_path_edited_since_is_a_conflict_unless_forced(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    notes = ws / "docs" / "notes.txt"
    write_file(store, notes, b"second\n")
    notes.write_text("the user's own edit, later\n")
    result = store.revert()
    assert [(c.path, c.reason) for c in result.conflicts] == [(str(notes), "it was modified since")]
    assert result.summary().startswith("Not undone: 1 path changed since")
    assert notes.read_text() == "the user's own edit, later\n" and len(store.entries()) == 1
    notes.chmod(0o600)
    assert [c.reason for c in store.revert().conflicts] == ["its mode changed since (640 → 600)"]
    forced = store.revert(force=True)
    assert forced.reverted and [c.reason for c in forced.conflicts] == ["its mode changed since (640 → 600)"]
    assert notes.read_text() == "first\n" and store.entries() == []
    assert (os.stat(notes).st_mode & 0o777, os.stat(notes).st_mtime_ns) == (0o640, T0)


def test_a_folder_that_gained_entries_since_is_a_conflict(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    write_file(store, ws / "new" / "a.txt", b"a\n")
    (ws / "new" / "mine.txt").write_text("added by the user\n")
    result = store.revert()
    assert [(c.path, c.reason) for c in result.conflicts] == [
        (str(ws / "new"), "the folder has new entries since: mine.txt")]
    assert (ws / "new" / "a.txt").exists()


def test_several_entries_touching_one_file_revert_in_one_go(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    notes = ws / "docs" / "notes.txt"
    before = manifest(ws, times=True)
    write_file(store, notes, b"second\n")
    write_file(store, notes, b"third, longer\n")
    write_file(store, ws / "other.txt", b"x\n")
    assert [e.label for e in store.entries()] == ["writeFile other.txt", "writeFile notes.txt", "writeFile notes.txt"]
    result = store.revert(3)  # notes.txt is "third" now; its older entry expects "second": not a conflict
    assert not result.conflicts and [e.label for e in result.reverted] == [
        "writeFile other.txt", "writeFile notes.txt", "writeFile notes.txt"]
    assert manifest(ws, times=True) == before and store.entries() == []
    write_file(store, notes, b"again\n")
    assert store.revert(5).summary() == "Undone: `writeFile notes.txt` (1 path restored)."


def test_entries_survive_a_restart_for_continue(ws: Path, tmp_path: Path) -> None:
    notes = ws / "docs" / "notes.txt"
    first = UndoStore(tmp_path / "undo", 1 << 20)
    write_file(first, notes, b"second\n")
    again = UndoStore(tmp_path / "undo", 1 << 20)
    assert again.entries() == first.entries()
    assert again.begin("next", "command").id > first.entries()[0].id
    assert not again.revert().conflicts and notes.read_text() == "first\n"


def test_a_deleted_tree_comes_back_with_modes_symlinks_fifos_and_times(tmp_path: Path) -> None:
    tree = tmp_path / "ws" / "tree"
    (tree / "sub" / "empty").mkdir(parents=True)
    (tree / "run.sh").write_text("#!/bin/sh\n")
    (tree / "run.sh").chmod(0o755)
    (tree / "sub" / "data").write_bytes(b"\0\1\2" * 1000)
    os.symlink("../run.sh", tree / "sub" / "link")
    os.symlink("dangling-target", tree / "dangling")
    os.mkfifo(tree / "pipe")
    (tree / "sub").chmod(0o700)
    os.utime(tree / "sub", ns=(T0, T0))
    before = manifest(tmp_path / "ws", times=True)
    store = UndoStore(tmp_path / "undo", 1 << 20)
    entry = store.begin("rm -rf tree", "command")
    entry.save_preimage(tree, whole=True, link=True)
    entry.prepare()
    shutil.rmtree(tree)
    entry.commit()
    assert not store.revert().conflicts
    assert diff_manifests(manifest(tmp_path / "ws", times=True), before) == []
    assert os.stat(tree / "sub").st_mtime_ns == T0


def test_a_linked_preimage_of_a_shared_inode_is_copied(ws: Path, tmp_path: Path) -> None:
    """A hard-linked pre-image would change with the file; with another link in place it must be a copy."""
    notes, other = ws / "docs" / "notes.txt", ws / "docs" / "other-name.txt"
    os.link(notes, other)
    store = UndoStore(tmp_path / "undo", 1 << 20)
    entry = store.begin("append through the other name", "command")
    entry.save_preimage(notes, link=True)
    with open(other, "a") as fh:  # written in place through the other name: the same inode changes
        fh.write("appended\n")
    entry.commit()
    store.revert()
    assert notes.read_text() == "first\n"


def test_oldest_entries_are_pruned_past_the_limit_with_a_notice(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 5000)
    for i in range(3):
        (ws / f"f{i}.bin").write_bytes(b"x" * 2000)
    notices = [write_file(store, ws / f"f{i}.bin", b"y") for i in range(3)]
    assert notices[:2] == [None, None]
    assert notices[2] == ("Undo history is limited to 5.0 KB: the oldest 1 change can no longer be undone "
                          "(`writeFile f0.bin`).")
    assert [e.label for e in store.entries()] == ["writeFile f2.bin", "writeFile f1.bin"]
    assert store.total_bytes() <= 5000 and not (tmp_path / "undo" / "000001").exists()
    (ws / "big.bin").write_bytes(b"z" * 9000)
    notice = write_file(store, ws / "big.bin", b"small")
    assert notice is not None and "the oldest 2 changes" in notice and "more than the limit" in notice
    assert [e.label for e in store.entries()] == ["writeFile big.bin"]
    assert not store.revert().conflicts and (ws / "big.bin").read_bytes() == b"z" * 9000


def test_an_interrupted_apply_can_still_be_reverted(ws: Path, tmp_path: Path) -> None:
    notes = ws / "docs" / "notes.txt"
    before = manifest(ws, times=True)
    entry = UndoStore(tmp_path / "undo", 1 << 20).begin("sed -i s/f/F/ docs/notes.txt", "command")
    entry.save_preimage(notes, link=True)
    entry.prepare()
    atomic_write(notes, b"First\n")  # ... and LACA stops here, before commit
    store = UndoStore(tmp_path / "undo", 1 << 20)
    assert [(e.label, e.state) for e in store.entries()] == [("sed -i s/f/F/ docs/notes.txt", "applying")]
    assert not store.revert().conflicts and manifest(ws, times=True) == before


def test_entries_begun_but_never_written_are_dropped_and_nothing_saved_keeps_nothing(
        ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    entry = store.begin("writeFile notes.txt", "writeFile")
    entry.save_preimage(ws / "docs" / "notes.txt")  # a blob on disk, but the entry is never prepared
    assert UndoStore(tmp_path / "undo", 1 << 20).entries() == [] and not any((tmp_path / "undo").iterdir())
    empty = store.begin("true", "command")
    assert empty.commit() is None and store.entries() == []


def test_a_damaged_entry_is_reported_not_raised(ws: Path, tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 1 << 20)
    write_file(store, ws / "docs" / "notes.txt", b"second\n")
    (tmp_path / "undo" / store.entries()[0].id / "records.json").write_text("{not json")
    entry_id = store.entries()[0].id
    result = store.revert()
    assert not result.reverted and len(result.errors) == 1 and "records.json: is not valid JSON" in result.errors[0]
    assert (ws / "docs" / "notes.txt").read_text() == "second\n" and store.entries() == []
    [moved] = (tmp_path / "undo").glob(f"{entry_id}.damaged-*")  # set aside, not deleted
    json.loads((moved / "info.json").read_text())


def test_damaged_entries_set_aside_are_counted_for_undo_to_say(tmp_path: Path) -> None:
    from framework_core.sandbox.undo_store import UndoStore

    ws, root = tmp_path / "ws", tmp_path / "undo"
    ws.mkdir()
    (root / "000001").mkdir(parents=True)
    (root / "000001" / "records.json").write_text("[]")  # its info.json is missing: a damaged decoy entry
    store = UndoStore(root, 1 << 20, workspace=ws)
    assert store.set_aside == 1 and store.entries() == []
    assert any("000001" in n for n in store.take_notices())
