"""Change sets of real commands run by bubblewrap on an overlay of a throwaway git workspace.

Each command also runs directly (same confinement, the workspace bound writable) on a copy: applying the
change set must give the same tree, and reverting the undo entry must give back the exact prior tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from framework_core.sandbox.changeset import apply, read_changes
from framework_core.sandbox.undo_store import UndoStore
from tests.unit.sandbox.overlay_kit import PROTECTED, Box, diff_manifests, make_repo, manifest

COMMANDS = {
    "reset-rm-append-create": "git reset -q --hard HEAD~1 && rm -rf src && echo more >> keep.txt && echo new > NEW.txt",
    "rm-rf-all-and-git": "rm -rf ./* .git; true",  # .git/hooks and .git/config are bound read-only: they stay
    "rm-rf-folder": "rm -rf src",
    "append": "echo more >> keep.txt",
    "create": "echo new > NEW.txt",
    "chmod": "chmod 700 keep.txt src && chmod +x src/a.py && chmod 600 run.sh",
    "symlinks": "ln -s keep.txt l2 && ln -sfn data.bin link && ln -s /etc src/outside",
    "mv-folder": "mv src lib",
    "sed-i": "sed -i 's/a/A/' src/a.py",
    "nested-new-folders": "mkdir -p n1/n2/n3 && echo x > n1/n2/n3/f && echo y > n1/top",
    "file-to-folder": "rm keep.txt && mkdir keep.txt && echo in > keep.txt/inner",
    "folder-to-file": "rm -rf src && echo now-a-file > src",
    "folder-recreated": "rm -rf src && mkdir src && echo z > src/z",
    "touch": "touch -d 2001-01-01 keep.txt",
    "hard-links": "ln keep.txt hard.txt && echo h > h1 && ln h1 h2",
    "git-commit-branch": "git checkout -q -b feature && echo f > f.txt && git add -A && git commit -qm f",
    "git-gc": "git gc -q --prune=now",
    "git-stash": "echo dirty >> keep.txt && git stash -q",
    "nothing": "true",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, bwrap: str) -> Path:
    root = tmp_path_factory.mktemp("template")
    return make_repo(Box(root / "box", bwrap), root / "repo")


def copy_of(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest, symlinks=True)
    return dest


def assert_same_tree(box: Box, ws: Path, direct: Path) -> None:
    """Equal manifests; the git index is compared by its entries (its stat cache differs by design)."""
    skip = (".git/index",)
    assert diff_manifests(manifest(ws, skip=skip), manifest(direct, skip=skip)) == []
    if (direct / ".git" / "index").exists():
        assert box.git(ws, "ls-files", "--stage") == box.git(direct, "ls-files", "--stage")


@pytest.mark.parametrize("cmd", COMMANDS.values(), ids=COMMANDS.keys())
def test_apply_reproduces_a_direct_run_and_revert_restores_the_exact_tree(
        cmd: str, box: Box, template: Path, tmp_path: Path) -> None:
    ws, direct = copy_of(template, tmp_path / "ws"), copy_of(template, tmp_path / "direct")
    before = manifest(ws, times=True)
    run = box.overlay(ws, cmd)
    done = box.direct(direct, cmd)
    assert run.returncode == done.returncode, run.output
    assert manifest(ws, times=True) == before  # the command itself changed nothing real
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    store = UndoStore(tmp_path / "undo", 1 << 30)
    result = apply(changes, run.upper, ws, store.begin(cmd, "command"), started_ns=run.started_ns)
    assert result.applied and not result.conflicts and result.error is None and not result.skipped
    assert_same_tree(box, ws, direct)
    assert len(store.entries()) == (1 if changes else 0)
    undone = store.revert()
    assert not undone.conflicts and not undone.errors
    assert diff_manifests(manifest(ws, times=True), before) == []


def test_reset_delete_append_create_is_summarised_and_undone_with_its_refs(
        box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    head = box.git(ws, "rev-parse", "HEAD")
    parent = box.git(ws, "rev-parse", "HEAD~1")
    run = box.overlay(ws, COMMANDS["reset-rm-append-create"])
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    kinds = {c.rel_path: c.kind for c in changes.changes}
    assert kinds["src"] == "deleted" and kinds["keep.txt"] == "modified" and kinds["NEW.txt"] == "created"
    assert kinds[".git/refs/heads/main"] == "modified" and kinds[".git/ORIG_HEAD"] == "created"  # a loose ref
    assert changes.placeholders == [".laca"] and not changes.protected_attempts
    summary = changes.summary()
    assert "1 folder deleted" in summary and "2 files created" in summary and "changed" in summary
    store = UndoStore(tmp_path / "undo", 1 << 30)
    result = apply(changes, run.upper, ws, store.begin("reset", "command"), started_ns=run.started_ns)
    assert result.summary() == summary
    assert box.git(ws, "rev-parse", "HEAD") == parent and not (ws / "src").exists()
    assert not (ws / ".laca").exists()  # the placeholder was not applied
    store.revert()
    assert box.git(ws, "rev-parse", "HEAD") == head and (ws / "src" / "a.py").read_text() == "print('a')\n"
    assert not (ws / "NEW.txt").exists() and (ws / "keep.txt").read_text() == "keep\n"


def test_every_kind_of_change_is_named(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "echo more >> keep.txt && chmod +x src/a.py && touch -d 2001-01-01 run.sh && "
                          "rm untracked.txt && rm -rf empty && ln -s keep.txt l2 && mkdir -p new/sub && "
                          "echo x > new/sub/x && rm -rf src/pkg && mkdir src/pkg && echo y > src/pkg/y && "
                          "chmod 700 src")
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    assert [(c.rel_path, c.kind, c.node) for c in changes.changes] == [
        ("empty", "deleted", "dir"), ("keep.txt", "modified", "file"), ("l2", "symlink", "symlink"),
        ("new", "created", "dir"), ("new/sub", "created", "dir"), ("new/sub/x", "created", "file"),
        ("run.sh", "touched", "file"), ("src", "mode_changed", "dir"), ("src/a.py", "mode_changed", "file"),
        ("src/pkg", "replaced_dir", "dir"), ("src/pkg/y", "created", "file"),
        ("untracked.txt", "deleted", "file")]
    assert changes.summary() == ("1 file changed, 2 files created, 2 folders created, 1 symlink created, "
                                 "1 file deleted, 1 folder deleted, 1 folder replaced, mode changed on 1 file, "
                                 "mode changed on 1 folder, 1 file touched")


def test_diff_shows_text_changes_and_names_binary_files(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "sed -i 's/a/A/' src/a.py && printf 'new\\n' > NEW.txt && "
                          "printf '\\0\\1\\2' >> data.bin && rm -rf src/pkg")
    text = read_changes(run.upper, ws, protected=PROTECTED).diff()
    assert "--- a/src/a.py\n+++ b/src/a.py" in text and "-print('a')\n+print('A')" in text
    assert "--- /dev/null\n+++ b/NEW.txt" in text and "+new" in text
    assert "binary file changed: data.bin (1,027 bytes)" in text and "deleted folder src/pkg" in text
    assert read_changes(run.upper, ws).diff(max_lines=2).endswith("more lines not shown")


def test_nothing_changed_costs_no_undo_entry(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "cat keep.txt > /dev/null && ls -R > /dev/null")
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    assert not changes and changes.summary() == "no files changed"
    store = UndoStore(tmp_path / "undo", 1 << 20)
    result = apply(changes, run.upper, ws, store.begin("ls", "command"), started_ns=run.started_ns)
    assert result.applied and store.entries() == [] and not any((tmp_path / "undo").iterdir())


def test_hard_links_made_by_the_command_stay_hard_links(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, COMMANDS["hard-links"])
    result = apply(read_changes(run.upper, ws, protected=PROTECTED), run.upper, ws, None, started_ns=run.started_ns)
    assert result.applied
    assert os.stat(ws / "h1").st_ino == os.stat(ws / "h2").st_ino
    assert os.stat(ws / "hard.txt").st_ino == os.stat(ws / "keep.txt").st_ino


# ---- protected paths -----------------------------------------------------------------------------------
def test_placeholders_and_protected_paths_are_never_applied(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    before = manifest(ws, times=True)
    # .envrc and tools.yaml are control paths the sandbox did not bind here: the change set still keeps them
    run = box.overlay(ws, "echo 'export X=1' > .envrc && echo t > tools.yaml && echo ok > ok.txt",
                      placeholders=(".laca", ".mcp.json"))
    protected = (*PROTECTED, ".envrc", "tools.yaml")
    changes = read_changes(run.upper, ws, protected=protected)
    assert sorted(changes.placeholders) == [".laca", ".mcp.json"]
    attempts = [(c.rel_path, c.kind) for c in changes.protected_attempts]
    assert attempts == [(".envrc", "created"), ("tools.yaml", "created")]
    assert [c.rel_path for c in changes.changes] == ["ok.txt"]
    assert changes.summary() == "1 file created, 2 protected paths left unchanged"
    assert "protected, not applied: .envrc" in changes.diff()
    store = UndoStore(tmp_path / "undo", 1 << 20)
    result = apply(changes, run.upper, ws, store.begin("x", "command"), started_ns=run.started_ns)
    assert result.applied and [c.rel_path for c in result.protected] == [".envrc", "tools.yaml"]
    after = manifest(ws, times=True)
    assert sorted(after.keys() - before.keys()) == ["ok.txt"] and not (before.keys() - after.keys())


def test_a_deleted_folder_keeps_a_protected_path_inside_it(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    before = manifest(ws, times=True)
    run = box.overlay(ws, "rm -rf src")  # src/pkg is protected below but not bound, so the command removed it
    changes = read_changes(run.upper, ws, protected=(*PROTECTED, "src/pkg"))
    assert [(c.rel_path, c.kind) for c in changes.protected_attempts] == [("src/pkg", "deleted")]
    store = UndoStore(tmp_path / "undo", 1 << 20)
    result = apply(changes, run.upper, ws, store.begin("rm", "command"), started_ns=run.started_ns)
    assert result.applied and "1 protected path left unchanged" in result.summary()
    assert sorted(str(p.relative_to(ws)) for p in (ws / "src").rglob("*")) == ["src/pkg", "src/pkg/b.py"]
    assert not store.revert().conflicts
    assert diff_manifests(manifest(ws, times=True), before) == []


# ---- conflicts: the workspace changed while the command ran -------------------------------------------
def test_a_target_edited_meanwhile_is_a_conflict_and_nothing_is_applied(
        box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "echo more >> keep.txt && echo new > NEW.txt && rm -rf src")
    (ws / "keep.txt").write_text("the user's edit\n")  # e.g. the user's editor, after the command started
    before = manifest(ws, times=True)
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    store = UndoStore(tmp_path / "undo", 1 << 20)
    result = apply(changes, run.upper, ws, store.begin("x", "command"), started_ns=run.started_ns)
    assert not result.applied and [c.path for c in result.conflicts] == ["keep.txt"]
    assert result.summary().startswith("Not applied: 1 path changed in the workspace while the command ran (keep.txt)")
    assert manifest(ws, times=True) == before and store.entries() == []
    forced = apply(changes, run.upper, ws, store.begin("x", "command"), started_ns=run.started_ns, force=True)
    assert forced.applied and (ws / "keep.txt").read_text() == "keep\nmore\n" and not (ws / "src").exists()
    store.revert(force=True)
    assert manifest(ws, times=True) == before  # the user's edit was saved as the pre-image


@pytest.mark.parametrize("meanwhile, path, reason", [
    (lambda ws: (ws / "NEW.txt").write_text("mine\n"), "NEW.txt", "it changed while the command ran"),
    (lambda ws: (ws / "src" / "pkg" / "b.py").write_text("edited\n"), "src/pkg/b.py",
     "it changed while the command ran"),
    (lambda ws: (ws / "keep.txt").unlink(), "keep.txt", "it was deleted or moved while the command ran"),
    (lambda ws: (ws / "src").rename(ws / "src2"), "src", "it was deleted or moved while the command ran"),
    (lambda ws: _swap_for_symlink(ws / "src", ws.parent / "outside"), "src", "it changed while the command ran"),
], ids=["appeared", "edited-inside-deleted-folder", "deleted", "folder-moved", "folder-became-symlink"])
def test_conflicts(meanwhile, path: str, reason: str, box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    (tmp_path / "outside").mkdir()
    run = box.overlay(ws, "echo new > NEW.txt && echo more >> keep.txt && rm -rf src/pkg && echo n > src/new.py")
    meanwhile(ws)
    before = manifest(ws, times=True)
    result = apply(read_changes(run.upper, ws, protected=PROTECTED), run.upper, ws, None, started_ns=run.started_ns)
    assert not result.applied and (path, reason) in [(c.path, c.reason) for c in result.conflicts]
    assert manifest(ws, times=True) == before and not any((tmp_path / "outside").iterdir())


def _swap_for_symlink(folder: Path, elsewhere: Path) -> None:
    folder.rename(folder.with_name(folder.name + "2"))
    os.symlink(elsewhere, folder)


def test_a_symlinked_folder_is_never_written_through(box: Box, template: Path, tmp_path: Path) -> None:
    """Swapped after the change set was read (say, while a dry run was shown): caught before writing."""
    ws = copy_of(template, tmp_path / "ws")
    (tmp_path / "outside").mkdir()
    run = box.overlay(ws, "echo n > src/new.py && echo m >> src/pkg/b.py")
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    _swap_for_symlink(ws / "src", tmp_path / "outside")
    result = apply(changes, run.upper, ws, None, started_ns=run.started_ns)
    assert not result.applied and not any((tmp_path / "outside").iterdir())
    assert {(c.path, c.reason) for c in result.conflicts} == {
        ("src/new.py", "its folder src was removed or replaced meanwhile"),
        ("src/pkg/b.py", "its folder src was removed or replaced meanwhile")}


def test_a_change_read_before_an_edit_is_still_checked_at_apply(box: Box, template: Path, tmp_path: Path) -> None:
    """A dry run: the change set is shown, the user edits a file, then says yes."""
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "rm untracked.txt && echo n > NEW.txt")
    changes = read_changes(run.upper, ws, protected=PROTECTED)
    (ws / "untracked.txt").unlink()
    (ws / "NEW.txt").write_text("mine\n")
    result = apply(changes, run.upper, ws, None, started_ns=run.started_ns)
    assert [(c.path, c.reason) for c in result.conflicts] == [("NEW.txt", "it appeared while the command ran"),
                                                              ("untracked.txt", "it was deleted meanwhile")]
    assert (ws / "NEW.txt").read_text() == "mine\n"


def test_a_replaced_folder_keeps_a_protected_path_inside_it(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "rm -rf src && mkdir src && echo z > src/z")
    changes = read_changes(run.upper, ws, protected=(*PROTECTED, "src/pkg/b.py"))
    assert [(c.rel_path, c.kind, c.node) for c in changes.protected_attempts] == [("src/pkg/b.py", "deleted", "file")]
    result = apply(changes, run.upper, ws, None, started_ns=run.started_ns)
    assert result.applied and "1 protected path left unchanged" in result.summary()
    assert sorted(str(p.relative_to(ws)) for p in (ws / "src").rglob("*")) == ["src/pkg", "src/pkg/b.py", "src/z"]


def test_a_socket_left_by_the_command_is_refused_and_said(box: Box, template: Path, tmp_path: Path) -> None:
    ws = copy_of(template, tmp_path / "ws")
    run = box.overlay(ws, "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")' && echo x > x")
    result = apply(read_changes(run.upper, ws, protected=PROTECTED), run.upper, ws, None, started_ns=run.started_ns)
    assert result.applied and [c.rel_path for c in result.skipped] == ["sock"]
    assert result.summary() == "1 file created" and not os.path.lexists(ws / "sock") and (ws / "x").exists()
    assert result.notes() == ["not applied: sock (a socket): only files, folders and symlinks land in the workspace"]
