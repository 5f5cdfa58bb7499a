"""How an overlay's change set lands, through the real sandbox (TEPS, bubblewrap, overlay, undo) on a throwaway
workspace whose HOME is a real folder outside /tmp: only data lands (no setuid, setgid or sticky bit; no FIFO,
socket or device), files land by rename from an upper layer kept on the workspace's file system, trees of any
depth apply and undo, and /undo gives back the exact tree."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.policy.decide import PolicyState
from framework_core.policy.rules import RuleSet
from framework_core.sandbox.changeset import apply, read_changes
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.sandbox.nodes import remove_tree
from framework_core.sandbox.scratch import drop, overlay_home
from framework_core.teps import TEPSEngine
from tests.unit.sandbox.overlay_kit import PROTECTED, Box, diff_manifests, manifest

pytestmark = pytest.mark.skipif(not probe().overlay, reason="no overlay sandbox on this machine: "
                                + (probe().overlay_error or "; ".join(probe().missing())))

REPO = Path(__file__).resolve().parents[3]
DEPTH = 1200


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home and a workspace in a real folder outside /tmp (the sandbox's /tmp is private), on one file system."""
    root = REPO / ".pytest-homes" / f"landing-{uuid.uuid4().hex[:8]}"
    (root / "home").mkdir(parents=True)
    (root / "ws").mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "home" / ".local" / "state"))
    yield root
    drop(root)  # shutil.rmtree recurses: it cannot remove the 1,200-level tree


def engine(root: Path, answers: int = 1, laca_dirs: tuple[Path, ...] = ()) -> TEPSEngine:
    ws, home = root / "ws", root / "home"
    sandbox = Sandbox("workspace-write", ws, home=home, laca_dirs=laca_dirs)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LC_ALL": "C"}
    return TEPSEngine({}, workspace=ws, approver=ScriptedApprover(["y"] * answers), env=env, sandbox=sandbox,
                      policy=PolicyState(rules=RuleSet(), allow_dangerous=True))


def run(teps: TEPSEngine, command: str) -> dict:
    result = teps.execute_tool({"request_id": "r1", "tool_name": "executeBashCommand",
                                "parameters": {"command": command}, "icerc_full_text": "test"})
    assert result["status"] == "success", result
    return result["data"]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_setuid_setgid_and_sticky_bits_never_land(base: Path) -> None:
    ws = base / "ws"
    (ws / "old").write_text("#!/bin/sh\n")
    (ws / "old").chmod(0o755)
    teps = engine(base)
    data = run(teps, "printf '#!/bin/sh\\n' > s && cp s g && chmod 4755 s && chmod 2755 g && chmod 4755 old && "
                     "mkdir t && chmod 1777 t && mkdir -p d && chmod 2775 d && touch d/f && "
                     "stat -c '%a %n' s g t d old")
    assert data["stdout"].split("\n")[:5] == ["4755 s", "2755 g", "1777 t", "2775 d", "4755 old"]  # inside
    assert (mode(ws / "s"), mode(ws / "g"), mode(ws / "t"), mode(ws / "d"), mode(ws / "old")) == \
        (0o755, 0o755, 0o777, 0o775, 0o755)
    assert (ws / "d" / "f").is_file() and (ws / "s").read_text() == "#!/bin/sh\n"
    assert "without their setuid, setgid or sticky bits" in data["sandbox"]
    for name in ("s", "g", "t", "d", "old"):
        assert name in data["sandbox"]


def test_fifos_and_sockets_are_refused_and_said(base: Path) -> None:
    ws = base / "ws"
    teps = engine(base)
    data = run(teps, "mkfifo pipe && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")' && "
                     "mkdir sub && mkfifo sub/p2 && echo ok > ok.txt")
    assert not os.path.lexists(ws / "pipe") and not os.path.lexists(ws / "sock")
    assert not os.path.lexists(ws / "sub" / "p2") and (ws / "sub").is_dir()
    assert (ws / "ok.txt").read_text() == "ok\n"
    assert "pipe (a FIFO)" in data["sandbox"] and "sock (a socket)" in data["sandbox"]
    assert "sub/p2 (a FIFO)" in data["sandbox"] and "only files, folders and symlinks land" in data["sandbox"]


def test_a_tree_1200_folders_deep_is_applied_removed_and_both_undone(base: Path) -> None:
    ws = base / "ws"
    deep = "/".join(["d"] * DEPTH)
    teps = engine(base, answers=2)
    empty = manifest(ws, times=True)
    run(teps, f"mkdir -p {deep} && echo bottom > {deep}/f && echo top > d/t")
    assert (ws / deep / "f").read_text() == "bottom\n"
    made = manifest(ws, times=True)
    run(teps, "rm -rf d")
    assert not (ws / "d").exists()
    assert not teps.undo.revert(1).conflicts
    assert diff_manifests(manifest(ws, times=True), made) == []
    assert not teps.undo.revert(1).conflicts
    assert diff_manifests(manifest(ws, times=True), empty) == []


def fill(ws: Path) -> None:
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    (ws / "src" / "pkg" / "b.py").write_text("b = 1\n")
    (ws / "keep.txt").write_text("keep\n")
    (ws / "gone.txt").write_text("gone\n")
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    os.symlink("keep.txt", ws / "link")
    os.link(ws / "keep.txt", ws / "keep-link.txt")
    (ws / "folder").mkdir()
    (ws / "folder" / "x").write_text("x\n")


EVERYTHING = ("mkdir -p new/sub && echo n > new/sub/n && echo top > top.txt && "
              "sed -i 's/a/A/' src/a.py && echo more >> keep.txt && chmod 700 run.sh && rm gone.txt && "
              "ln -sfn run.sh link && ln -s src l2 && ln top.txt top-link.txt && ln src/a.py a-link.py && "
              "rm -rf folder && echo now-a-file > folder && rm -rf src/pkg && mkdir src/pkg && echo c > src/pkg/c.py")


def test_undo_restores_exactly_after_a_change_landed_by_rename(base: Path) -> None:
    ws = base / "ws"
    fill(ws)
    before = manifest(ws, times=True)
    inode = os.stat(ws / "keep.txt").st_ino
    teps = engine(base)
    run(teps, EVERYTHING)
    assert (ws / "new" / "sub" / "n").read_text() == "n\n" and (ws / "folder").read_text() == "now-a-file\n"
    assert (ws / "src" / "a.py").read_text() == "print('A')\n" and not (ws / "gone.txt").exists()
    assert os.readlink(ws / "link") == "run.sh" and mode(ws / "run.sh") == 0o700
    assert os.stat(ws / "top.txt").st_ino == os.stat(ws / "top-link.txt").st_ino  # hard links stay hard links
    assert os.stat(ws / "src" / "a.py").st_ino == os.stat(ws / "a-link.py").st_ino
    assert sorted(os.listdir(ws / "src" / "pkg")) == ["c.py"]
    assert not teps.undo.revert(1).conflicts
    assert diff_manifests(manifest(ws, times=True), before) == []
    assert os.stat(ws / "keep-link.txt").st_ino == inode  # the other name of a file the command changed


def test_the_overlay_lives_on_the_workspaces_file_system_in_lacas_state_folder(base: Path) -> None:
    sandbox = Sandbox("workspace-write", base / "ws", home=base / "home")
    with sandbox.launch(cwd=base / "ws", writes=True, network=False) as launch:
        assert launch.upper is not None
        assert launch.upper.is_relative_to(base / "home" / ".local" / "state" / "laca" / "overlays")
        assert os.stat(launch.upper).st_dev == os.stat(base / "ws").st_dev
    sandbox.discard(launch)
    folder = launch.upper.parent.parent
    sandbox.close()
    assert not folder.exists()  # the session's folder goes with the session


def test_a_state_folder_inside_the_workspace_is_never_used(base: Path) -> None:
    inside = base / "ws" / ".local" / "state" / "laca" / "overlays"
    sandbox = Sandbox("workspace-write", base / "ws", home=base / "home", overlay_dirs=(inside,))
    with sandbox.launch(cwd=base / "ws", writes=True, network=False) as launch:
        assert launch.upper is not None and not launch.upper.is_relative_to(base / "ws")
    sandbox.discard(launch)
    sandbox.close()
    assert not (base / "ws" / ".local").exists()  # nothing made in the user's tree


def test_new_and_modified_files_are_moved_not_copied(box: Box, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "old.txt").write_text("old\n")
    run_ = box.overlay(ws, "mkdir n && echo a > n/a && echo b > b && echo more >> old.txt && "
                           "python3 -c 'import os; os.setxattr(\"b\", \"user.note\", b\"x\")'")
    upper_inodes = {rel: os.stat(run_.upper / rel).st_ino for rel in ("n/a", "b", "old.txt")}
    result = apply(read_changes(run_.upper, ws, protected=PROTECTED), run_.upper, ws, None,
                   started_ns=run_.started_ns)
    assert result.applied and result.error is None
    assert {rel: os.stat(ws / rel).st_ino for rel in upper_inodes} == upper_inodes
    assert os.listxattr(ws / "b") == []  # what the command set on a file does not come with it
    assert (ws / "old.txt").read_text() == "old\nmore\n"


def test_a_state_folder_on_another_file_system_is_not_used(base: Path) -> None:
    other = Path("/dev/shm")
    if not other.is_dir() or os.stat(other).st_dev == os.stat(base / "ws").st_dev:
        pytest.skip("needs /dev/shm on another file system than the repository")
    sandbox = Sandbox("workspace-write", base / "ws", home=base / "home", overlay_dirs=(other / "laca-test-never",))
    with sandbox.launch(cwd=base / "ws", writes=True, network=False) as launch:
        assert launch.upper is not None and not launch.upper.is_relative_to(other)
    sandbox.discard(launch)
    sandbox.close()
    assert not (other / "laca-test-never").exists()


def test_across_file_systems_files_are_copied_without_their_special_bits(box: Box, tmp_path: Path) -> None:
    """Where the upper layer is on another file system (a tmpfs /tmp), files still land, by copy."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on another file system than the test's folder")
    ws = tmp_path / "ws"
    ws.mkdir()
    other = Box(Path(f"/dev/shm/laca-test-{uuid.uuid4().hex[:8]}"), box.bwrap)
    try:
        run_ = other.overlay(ws, "echo a > a && chmod 4755 a && mkdir d && ln a d/b")
        if run_.returncode != 0:
            pytest.skip(f"an overlay with its upper layer on tmpfs does not mount here: {run_.output[:200]}")
        result = apply(read_changes(run_.upper, ws, protected=PROTECTED), run_.upper, ws, None,
                       started_ns=run_.started_ns)
        assert result.applied and result.error is None and result.stripped == ["a", "d/b"]  # one inode, two names
        assert mode(ws / "a") == 0o755 and os.stat(ws / "a").st_ino == os.stat(ws / "d" / "b").st_ino
        assert (run_.upper / "a").exists()  # copied, not moved
    finally:
        drop(other.root)


def test_a_command_sees_no_overlay_in_lacas_state_folder(base: Path) -> None:
    state = base / "home" / ".local" / "state" / "laca"
    teps = engine(base, laca_dirs=(state,))  # as LACA is wired: its state folder is hidden like its data
    data = run(teps, f"ls -A {state} | wc -l; ls -d {state}/overlays 2>&1; echo x > landed.txt")
    assert data["stdout"].split("\n")[0].strip() == "0" and "No such file" in data["stdout"]
    assert (base / "ws" / "landed.txt").read_text() == "x\n"
    assert any((state / "overlays").iterdir())  # the overlay was there all along, outside the command's view


def test_remove_tree_keeps_the_kept_paths_and_the_folders_to_them(tmp_path: Path) -> None:
    top = tmp_path / "top"
    deep = str(top)
    os.mkdir(deep)
    for _ in range(DEPTH):  # one level at a time: os.makedirs recurses
        deep += "/d"
        os.mkdir(deep)
    Path(deep, "f").write_text("x")
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "kept.txt").write_text("k")
    (top / "a" / "b" / "gone.txt").write_text("g")
    (top / "a" / "kept-dir" / "inside").mkdir(parents=True)
    os.symlink("/", top / "a" / "root-link")  # never followed
    remove_tree(str(top), frozenset({str(top / "a" / "b" / "kept.txt"), str(top / "a" / "kept-dir")}))
    left = sorted(str(p.relative_to(top)) for p in top.rglob("*"))
    assert left == ["a", "a/b", "a/b/kept.txt", "a/kept-dir", "a/kept-dir/inside"]
    remove_tree(str(top))
    assert not top.exists()


def test_overlays_left_by_a_killed_laca_are_removed_once_old(base: Path, bwrap: str) -> None:
    overlays = base / "home" / ".local" / "state" / "laca" / "overlays"
    dead, live = overlays / "999999999-old", overlays / f"{os.getpid()}-old"
    for folder in (dead, live):
        (folder / "cmd-x" / "upper").mkdir(parents=True)
        os.utime(folder, (1, 1))
    folder = overlay_home(base / "ws", bwrap, (overlays,))
    assert folder is not None and folder.parent == overlays
    assert not dead.exists() and live.exists()  # this process is alive: its folders stay
    drop(folder)
