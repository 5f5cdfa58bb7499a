"""Undo records are checked before they are believed: undo acts only inside its workspace, a saved copy is
verified before anything is removed, damaged records are set aside and said (never deleted, never acted
on), a full disk is told truthfully, and an apply killed half-way is said at the next start.

Every damaged record here names decoy files in temporary folders, never a real system path."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from framework_core.sandbox.undo_store import UndoError, UndoStore
from framework_core.tools.files import atomic_write, write_with_undo
from tests.unit.sandbox.overlay_kit import manifest

ROOT = Path(__file__).resolve().parents[3]
T0 = 1_600_000_000_000_000_000


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "notes.txt").write_text("first\n")
    os.utime(ws / "docs" / "notes.txt", ns=(T0, T0))
    return ws


@pytest.fixture
def decoy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file in another temporary folder, outside the workspace: what a hostile record would aim at."""
    f = tmp_path_factory.mktemp("elsewhere") / "decoy.txt"
    f.write_text("decoy: must stay\n")
    f.chmod(0o644)
    os.utime(f, ns=(T0, T0))
    return f


def store_at(tmp_path: Path, ws: Path, cls: type[UndoStore] = UndoStore) -> UndoStore:
    return cls(tmp_path / "undo", 1 << 20, workspace=ws)


def written(store: UndoStore, path: Path, data: bytes) -> str:
    write_with_undo(path, data, append=False, undo=store, label=f"writeFile {path.name}")
    return store.entries()[0].id


def edit_records(entry_dir: Path, edit) -> None:
    records = json.loads((entry_dir / "records.json").read_text())
    edit(records)
    (entry_dir / "records.json").write_text(json.dumps(records))


def aside(tmp_path: Path, entry_id: str) -> list[Path]:
    return sorted((tmp_path / "undo").glob(f"{entry_id}.damaged-*"))


def state_of(f: Path) -> tuple[bytes, int, int]:
    st = os.lstat(f)
    return f.read_bytes(), st.st_mode, st.st_mtime_ns


@pytest.mark.parametrize("when", ["at start", "at undo"])
def test_a_record_naming_a_file_outside_the_workspace_leaves_it_alone(
        when: str, ws: Path, tmp_path: Path, decoy: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    before = state_of(decoy)
    edit_records(tmp_path / "undo" / entry_id, lambda r: r[0].update(path=str(decoy)))
    if when == "at start":
        store = store_at(tmp_path, ws)
        [notice] = store.take_notices()
        assert store.entries() == [] and store.revert().summary() == "Nothing to undo."
    else:
        result = store.revert()
        assert not result.reverted and result.restored == 0 and "damaged" in result.summary()
        [notice] = result.errors
    assert f"{tmp_path / 'undo' / entry_id / 'records.json'}" in notice and str(decoy) in notice
    assert "outside the workspace" in notice and "writeFile notes.txt" in notice
    assert state_of(decoy) == before and (ws / "docs" / "notes.txt").read_text() == "second\n"
    [moved] = aside(tmp_path, entry_id)
    assert (moved / "blobs" / "1").read_text() == "first\n"  # set aside whole: nothing deleted


@pytest.mark.parametrize("hostile", ["../../elsewhere/decoy.txt", "relative/path"])
def test_a_path_with_dot_dot_or_without_root_is_refused(hostile: str, ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    path = f"{ws}/{hostile}" if hostile.startswith("..") else hostile
    edit_records(tmp_path / "undo" / entry_id, lambda r: r[0].update(path=path))
    result = store.revert()
    assert result.refused and "not a plain absolute path" in result.errors[0]
    assert (ws / "docs" / "notes.txt").read_text() == "second\n"


@pytest.mark.parametrize("damage", ["gone", "one byte", "cut short", "symlink"])
def test_a_missing_or_damaged_saved_copy_keeps_the_current_file(
        damage: str, ws: Path, tmp_path: Path, decoy: Path) -> None:
    store = store_at(tmp_path, ws)
    notes = ws / "docs" / "notes.txt"
    entry_id = written(store, notes, b"second\n")
    blob = tmp_path / "undo" / entry_id / "blobs" / "1"
    if damage == "gone":
        blob.unlink()
    elif damage == "one byte":
        blob.write_bytes(b"firsT\n")
    elif damage == "cut short":
        blob.write_bytes(b"fir")
    else:
        blob.unlink()
        blob.symlink_to(decoy)
    result = store.revert()
    assert result.refused and not result.reverted and result.restored == 0
    assert "restored" not in result.summary() and str(blob) in result.errors[0]
    assert notes.read_text() == "second\n" and not notes.is_symlink()
    assert decoy.read_text() == "decoy: must stay\n" and aside(tmp_path, entry_id)


def test_a_folder_swapped_for_a_symlink_is_not_followed(ws: Path, tmp_path: Path, decoy: Path) -> None:
    store = store_at(tmp_path, ws)
    written(store, ws / "docs" / "notes.txt", b"second\n")
    outside = decoy.parent
    (outside / "notes.txt").write_text("outside, must stay\n")
    os.rename(ws / "docs", tmp_path / "docs-moved")
    (ws / "docs").symlink_to(outside)
    result = store.revert(force=True)
    assert not result.reverted and "is now a symlink or not a folder" in result.errors[0]
    assert (outside / "notes.txt").read_text() == "outside, must stay\n" and len(store.entries()) == 1


def test_undo_within_the_workspace_still_restores_exactly(ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws)
    before = manifest(ws, times=True)
    written(store, ws / "docs" / "notes.txt", b"second\n")
    written(store, ws / "new" / "deep.txt", b"new\n")
    again = store_at(tmp_path, ws)
    assert again.take_notices() == [] and len(again.entries()) == 2
    assert again.revert(2).summary().startswith("Undone:") and manifest(ws, times=True) == before


def test_a_truncated_info_json_is_set_aside_and_said_not_deleted(ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    info = tmp_path / "undo" / entry_id / "info.json"
    info.write_text(info.read_text()[:25])
    again = store_at(tmp_path, ws)
    [notice] = again.take_notices()
    assert str(info) in notice and "not valid JSON" in notice and "nothing deleted" in notice
    assert again.take_notices() == []  # said once
    [moved] = aside(tmp_path, entry_id)
    assert (moved / "blobs" / "1").read_text() == "first\n" and (moved / "records.json").exists()
    assert again.begin("next", "command").id > entry_id  # the number is not reused


@pytest.mark.parametrize("bad", [{"id": "abc"}, {"id": 7}, {"paths": "3"}, {"state": "done"}, "deep"])
def test_a_malformed_info_json_never_stops_the_start(bad, ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    info = tmp_path / "undo" / entry_id / "info.json"
    if bad == "deep":
        info.write_text("[" * 100_000 + "]" * 100_000)
    else:
        info.write_text(json.dumps({**json.loads(info.read_text()), **bad}))
    again = store_at(tmp_path, ws)  # what --continue builds: it starts
    [notice] = again.take_notices()
    assert str(info) in notice and again.entries() == [] and aside(tmp_path, entry_id)
    if bad != "deep":
        assert "writeFile notes.txt" in notice  # what it held, from its label


def test_a_non_numeric_entry_folder_is_set_aside(ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    os.rename(tmp_path / "undo" / entry_id, tmp_path / "undo" / "abc")
    again = store_at(tmp_path, ws)
    [notice] = again.take_notices()
    assert "abc" in notice and again.entries() == [] and aside(tmp_path, "abc")


def test_a_malformed_record_shape_is_set_aside(ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    edit_records(tmp_path / "undo" / entry_id, lambda r: r[0]["saved"][0].__setitem__(1, ["file", "x", 1, 2, ""]))
    assert store.revert().refused and (ws / "docs" / "notes.txt").read_text() == "second\n"


class FullDisk(UndoStore):
    """A real store whose disk fills up: its record writes fail with ENOSPC once `full` is set (all of
    them) or `full_at_commit` is set (the final one, after the file was written)."""

    full = False
    full_at_commit = False

    def write_json(self, path: Path, text: str) -> None:
        if self.full or (self.full_at_commit and '"state": "committed"' in text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        super().write_json(path, text)


def test_a_full_disk_before_the_write_touches_nothing(ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws, FullDisk)
    assert isinstance(store, FullDisk)
    store.full = True
    notes = ws / "docs" / "notes.txt"
    with pytest.raises(UndoError, match="No space left on device"):
        write_with_undo(notes, b"second\n", append=False, undo=store, label="writeFile notes.txt")
    assert notes.read_text() == "first\n" and store.entries() == [] and not any((tmp_path / "undo").iterdir())


def test_a_full_disk_after_the_write_is_told_truthfully(ws: Path, tmp_path: Path) -> None:
    store = store_at(tmp_path, ws, FullDisk)
    assert isinstance(store, FullDisk)
    store.full_at_commit = True
    notes = ws / "docs" / "notes.txt"
    size, notice = write_with_undo(notes, b"second\n", append=False, undo=store, label="writeFile notes.txt")
    assert size == 7 and notes.read_text() == "second\n"
    assert notice == ("`writeFile notes.txt` was carried out, but its undo record could not be completed "
                      "(No space left on device); /undo may not restore it fully.")
    assert [e.state for e in store.entries()] == ["applying"]
    assert store.revert().reverted and notes.read_text() == "first\n"


KILLED_APPLY = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from framework_core.sandbox.undo_store import UndoStore
    from framework_core.tools.files import atomic_write
    root, ws = sys.argv[1], sys.argv[2]
    entry = UndoStore(root, 1 << 20, workspace=ws).begin("make all", "command")
    for name in ("a", "b", "c"):
        entry.save_preimage(os.path.join(ws, name), link=True)
    entry.prepare()
    atomic_write(Path(ws, "a"), b"A2")
    atomic_write(Path(ws, "b"), b"B2")
    os.kill(os.getpid(), 9)  # LACA killed mid-apply
""")


def test_an_apply_killed_half_way_is_said_at_the_next_start(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in "abc":
        (ws / name).write_text(name.upper() + "1")
    before = manifest(ws, times=True)
    proc = subprocess.run([sys.executable, "-c", KILLED_APPLY, str(tmp_path / "undo"), str(ws)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    store = store_at(tmp_path, ws)
    assert store.take_notices() == ["The change set of call 1 (`make all`) was interrupted: 2 of 3 paths landed; "
                                    "`/undo 1` restores it."]
    assert store.take_notices() == []
    [info] = store.entries()
    assert (info.state, info.landed, info.paths) == ("applying", 2, 3)
    assert store.revert().reverted and manifest(ws, times=True) == before


def test_an_interrupted_entry_behind_a_newer_one_names_its_number(ws: Path, tmp_path: Path) -> None:
    entry = store_at(tmp_path, ws).begin("sed -i s/f/F/ docs/notes.txt", "command")
    entry.save_preimage(ws / "docs" / "notes.txt", link=True)
    entry.prepare()
    atomic_write(ws / "docs" / "notes.txt", b"First\n")
    written(store_at(tmp_path, ws), ws / "other.txt", b"x")
    notices = store_at(tmp_path, ws).take_notices()
    assert notices == ["The change set of call 2 (`sed -i s/f/F/ docs/notes.txt`) was interrupted: 1 of 1 path "
                       "landed; `/undo 2` restores it (and undoes the 1 newer changes)."]


def test_the_model_is_told_what_happened_on_a_full_disk(ws: Path, tmp_path: Path) -> None:
    from framework_core.config.models import TepsSettings
    from framework_core.errors import ToolError
    from framework_core.tools.base import ToolContext
    from framework_core.tools.builtin import write_handler

    store = store_at(tmp_path, ws, FullDisk)
    assert isinstance(store, FullDisk)
    ctx = ToolContext(workspace=ws, settings=TepsSettings(), env={}, undo=store)
    store.full = True
    with pytest.raises(ToolError, match="not written: cannot write the undo record .*No space left on device"):
        write_handler({"path": "docs/notes.txt", "content": "second\n"}, ctx)
    assert (ws / "docs" / "notes.txt").read_text() == "first\n"
    store.full, store.full_at_commit = False, True
    result = write_handler({"path": "docs/notes.txt", "content": "second\n"}, ctx)
    assert result["status"] == "written successfully" and (ws / "docs" / "notes.txt").read_text() == "second\n"
    assert "was carried out, but its undo record could not be completed" in result["undo_note"]


def test_a_blobs_folder_swapped_for_a_symlink_is_refused(ws: Path, tmp_path: Path, decoy: Path) -> None:
    store = store_at(tmp_path, ws)
    entry_id = written(store, ws / "docs" / "notes.txt", b"second\n")
    blobs = tmp_path / "undo" / entry_id / "blobs"
    os.rename(blobs, decoy.parent / "blobs")
    blobs.symlink_to(decoy.parent / "blobs")
    result = store.revert()
    assert result.refused and "is not a folder (a symlink?)" in result.errors[0]
    assert (ws / "docs" / "notes.txt").read_text() == "second\n"
