"""The gate through the real sandbox: one approved command's change set, with HOME and the workspace in a real
folder outside /tmp. Git's redirections do not land and are said with path and reason; ordinary work in the
same command (a written file, a new repository with a commit) lands and git uses it afterwards."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from framework_core.core.approval import ApprovalAnswer, ScriptedApprover
from framework_core.policy.decide import PolicyState
from framework_core.policy.rules import RuleSet
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.teps import TEPSEngine

pytestmark = pytest.mark.skipif(not probe().available or not probe().overlay,
                                reason="no overlay sandbox on this machine: " + "; ".join(probe().missing()))

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Plain git outside the sandbox, only to build fixtures and to read: with HOME the test's own."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def place(outside_tmp: Path) -> tuple[Path, Path]:
    home, ws = outside_tmp / "home", outside_tmp / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def engine(ws: Path, home: Path, answers: int = 1, **sandbox: object) -> TEPSEngine:
    settings: dict = {"use_overlay": True, **sandbox}
    box = Sandbox("workspace-write", ws.resolve(), home=home, **settings)
    base = {"PATH": os.environ["PATH"], "HOME": str(home), **GIT_ENV}
    return TEPSEngine({}, workspace=ws, approver=ScriptedApprover(["y"] * answers), env=base, sandbox=box,
                      policy=PolicyState(rules=RuleSet(), allow_dangerous=True))


def run(teps: TEPSEngine, command: str) -> dict:
    return teps.execute_tool({"request_id": "r1", "tool_name": "executeBashCommand",
                              "parameters": {"command": command}, "icerc_full_text": "test"})


def make_workspace(ws: Path, home: Path) -> None:
    """A repository with a submodule laid out as git lays it out, and a nested repository under build/ (a
    folder the read-only scan skips: only the gate stands between a command and its config)."""
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "init")):
        assert git(ws, *args, home=home).returncode == 0
    assert git(ws, "init", "-q", "sub", home=home).returncode == 0
    (ws / ".git" / "modules").mkdir()
    (ws / "sub" / ".git").rename(ws / ".git" / "modules" / "sub")
    (ws / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert git(ws / "sub", "config", "core.worktree", "../../../sub", home=home).returncode == 0
    assert git(ws / "sub", "status", home=home).returncode == 0
    (ws / "build").mkdir()
    assert git(ws / "build", "init", "-q", "nested", home=home).returncode == 0


ATTACK = "; ".join([
    "echo data > written.txt",
    "printf '../elsewhere\\n' > .git/commondir",
    "mkdir -p a && printf 'gitdir: ../x\\n' > a/.git",
    "printf 'gitdir: ../evil\\n' > sub/.git",
    "git -C build/nested config include.path ../../../evil.cfg",
    "printf '#!/bin/sh\\necho pwned\\n' > build/nested/.git/hooks/post-checkout",
    "git init -q monitored && git -C monitored config core.fsmonitor 'touch pwned'",
    "git init -q fresh && cd fresh && echo hi > f && git add f && git commit -qm first",
])


def test_git_redirections_do_not_land_and_ordinary_work_does(place: tuple[Path, Path]) -> None:
    home, ws = place
    make_workspace(ws, home)
    nested_config = (ws / "build" / "nested" / ".git" / "config").read_bytes()
    result = run(engine(ws, home), ATTACK)
    assert result["status"] == "success", result
    note = result["data"]["sandbox"]
    for rel, why in ((".git/commondir", "commondir points git at ../elsewhere"),
                     ("a/.git", "sends git to ../x"), ("sub/.git", "sends git to ../evil"),
                     ("build/nested/.git/config", "include.path"),
                     ("build/nested/.git/hooks/post-checkout", "git runs hooks"),
                     ("monitored/.git/config", "core.fsmonitor")):
        assert f"{rel}: " in note and why in note, (rel, note)
    assert not (ws / ".git" / "commondir").exists() and not (ws / "a" / ".git").exists()
    assert (ws / "sub" / ".git").read_text() == "gitdir: ../.git/modules/sub\n"
    assert (ws / "build" / "nested" / ".git" / "config").read_bytes() == nested_config
    assert not (ws / "build" / "nested" / ".git" / "hooks" / "post-checkout").exists()
    assert not (ws / "monitored" / ".git" / "config").exists()
    # ordinary work in the same command landed, and git uses the new repository as git wrote it
    assert (ws / "written.txt").read_text() == "data\n"
    assert git(ws / "fresh", "log", "--format=%s", home=home).stdout.split() == ["first"]
    assert "bare = false" in (ws / "fresh" / ".git" / "config").read_text()
    assert any(p.name.endswith(".sample") for p in (ws / "fresh" / ".git" / "hooks").iterdir())
    assert git(ws / "fresh", "status", "--porcelain", home=home).stdout == ""
    assert git(ws / "sub", "status", home=home).returncode == 0


def test_mv_inside_the_workspace_lands(place: tuple[Path, Path]) -> None:
    home, ws = place
    (ws / "a").write_text("moved\n")
    result = run(engine(ws, home), "mv a b")
    assert result["status"] == "success", result
    assert "Not applied" not in result["data"]["changes"]
    assert not (ws / "a").exists() and (ws / "b").read_text() == "moved\n"


def test_a_change_set_over_the_size_bound_is_not_applied_and_never_reads_as_ok(place: tuple[Path, Path]) -> None:
    home, ws = place
    result = run(engine(ws, home, max_apply_bytes=1 << 20), "truncate -s 2M sparse.bin && echo x > small.txt")
    assert result["status"] == "error", result
    assert "NOT applied" in result["data"]["error_message"]
    assert "2,097,154 bytes, over the limit 1,048,576; raise sandbox.max_apply_bytes" in result["data"]["changes"]
    assert not (ws / "sparse.bin").exists() and not (ws / "small.txt").exists()


def test_files_that_run_later_land_and_are_named_first(place: tuple[Path, Path]) -> None:
    home, ws = place
    result = run(engine(ws, home), "echo 'all:; echo hi' > Makefile && echo x > notes.txt")
    assert result["status"] == "success", result
    assert result["data"]["changes"].startswith("runs later: Makefile; ")
    assert "Makefile (make runs its recipes)" in result["data"]["sandbox"]
    assert (ws / "Makefile").is_file() and (ws / "notes.txt").is_file()


def test_a_worktree_outside_the_workspace_is_said_plainly(place: tuple[Path, Path]) -> None:
    home, ws = place
    assert git(ws, "init", "-q", "-b", "main", home=home).returncode == 0
    assert git(ws, "commit", "-q", "--allow-empty", "-m", "init", home=home).returncode == 0
    result = run(engine(ws, home), "git worktree add -q /tmp/wt")
    note = result["data"].get("sandbox", "")
    assert "outside the workspace (/tmp/wt)" in note and "git worktree add" in note, result
    assert not (ws / ".git" / "worktrees" / "wt" / "gitdir").exists()


def test_a_tree_1200_levels_deep_lands(place: tuple[Path, Path]) -> None:
    home, ws = place
    deep = "/".join(["d"] * 1200)
    result = run(engine(ws, home), f"mkdir -p {deep} && echo bottom > {deep}/f")
    assert result["status"] == "success", result
    assert (ws / deep / "f").read_text() == "bottom\n"


def test_the_preview_names_what_runs_later_first_and_its_title_names_paths(place: tuple[Path, Path]) -> None:
    home, ws = place
    box = Sandbox("workspace-write", ws.resolve(), home=home, use_overlay=True)
    approver = ScriptedApprover([ApprovalAnswer("once", preview=True), "n"])
    teps = TEPSEngine({}, workspace=ws, approver=approver, env={"PATH": os.environ["PATH"], "HOME": str(home)},
                      sandbox=box, policy=PolicyState(rules=RuleSet(), allow_dangerous=True))
    lines = "".join(f"line {i}\n" for i in range(600))
    result = run(teps, f"printf '{lines}' > big.txt && echo '{{\"scripts\": {{}}}}' > package.json && "
                       "mkdir -p .laca && echo x > .laca/rules.yaml")
    title, diff = approver.reviewed[0]
    assert title.startswith("runs later: package.json · 1 file created: big.txt")
    assert "not applied: .laca" in title
    assert diff.startswith("RUNS LATER (npm runs its scripts (install hooks included)): package.json")
    assert "more lines not shown" in diff and "protected, not applied: .laca/rules.yaml" in diff
    assert result["status"] == "error" and "NOT applied" in result["data"]["error_message"]
    assert not (ws / "package.json").exists() and not (ws / "big.txt").exists()


def test_a_worktree_in_a_read_only_parent_is_said_with_where_it_could_go(place: tuple[Path, Path]) -> None:
    home, ws = place
    assert git(ws, "init", "-q", "-b", "main", home=home).returncode == 0
    assert git(ws, "commit", "-q", "--allow-empty", "-m", "init", home=home).returncode == 0
    result = run(engine(ws, home), "git worktree add ../wt")
    assert result["status"] == "error"
    note = result["data"]["sandbox"]
    assert "git worktree at ../wt is outside the workspace" in note and "git worktree add worktrees/NAME" in note
    assert not (ws.parent / "wt").exists()


def test_a_repository_completed_in_a_later_command_adopts_the_config_already_there(place: tuple[Path, Path]) -> None:
    home, ws = place
    teps = engine(ws, home, answers=2)
    first = run(teps, "mkdir -p other/objects other/refs && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > "
                      "other/config")
    assert first["status"] == "success" and (ws / "other" / "config").is_file()  # no repository: plain data
    second = run(teps, "echo 'ref: refs/heads/main' > other/HEAD")
    assert not (ws / "other" / "HEAD").exists()
    assert "other/HEAD: it would make other a git repository whose other/config git would act on" in \
        second["data"]["sandbox"]


def test_git_init_at_the_workspace_root_lands_as_git_writes_it(place: tuple[Path, Path]) -> None:
    home, ws = place
    result = run(engine(ws, home), "git init -q -b main && echo hi > f && git add f && git commit -qm first")
    assert result["status"] == "success", result
    assert "bare = false" in (ws / ".git" / "config").read_text()
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir())[:1] == ["applypatch-msg.sample"]
    assert git(ws, "log", "--format=%s", home=home).stdout.split() == ["first"]
    assert git(ws, "status", "--porcelain", home=home).stdout == ""


def test_without_an_overlay_a_new_repository_keeps_what_git_init_writes_and_loses_what_runs(
        place: tuple[Path, Path]) -> None:
    home, ws = place
    teps = engine(ws, home, use_overlay=False)
    result = run(teps, "git init -q fresh && git -C fresh commit -q --allow-empty -m first && git init -q evil && "
                       "git -C evil config core.fsmonitor 'touch pwned' && printf '#!/bin/sh\\n' > "
                       "evil/.git/hooks/pre-commit")
    assert result["data"]["exit_code"] == 0, result
    assert git(ws / "fresh", "log", "--format=%s", home=home).stdout.split() == ["first"]
    assert "bare = false" in (ws / "fresh" / ".git" / "config").read_text()
    assert not (ws / "evil" / ".git" / "config").exists()
    assert not (ws / "evil" / ".git" / "hooks" / "pre-commit").exists()
    assert "evil/.git/config" in result["data"]["sandbox"]


def test_a_submodule_added_by_git_lands_as_git_lays_it_out(place: tuple[Path, Path]) -> None:
    home, ws = place
    source = ws / "upstream"  # inside the workspace: nothing outside it exists for a command
    source.mkdir()
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "lib")):
        assert git(source, *args, home=home).returncode == 0
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "init")):
        assert git(ws, *args, home=home).returncode == 0
    result = run(engine(ws, home), f"git -c protocol.file.allow=always submodule add -q file://{source} lib && "
                                   "git commit -qm 'add lib'")
    assert result["status"] == "success", result
    assert "not kept" not in result["data"].get("sandbox", ""), result
    assert (ws / "lib" / ".git").read_text().startswith("gitdir: ../.git/modules/lib")
    assert git(ws, "submodule", "status", home=home).returncode == 0
    assert git(ws / "lib", "log", "--format=%s", home=home).stdout.split() == ["lib"]
    assert git(ws, "log", "--format=%s", home=home).stdout.splitlines() == ["add lib", "init"]


def test_a_worktree_inside_the_workspace_lands_and_git_uses_it(place: tuple[Path, Path]) -> None:
    home, ws = place
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "init")):
        assert git(ws, *args, home=home).returncode == 0
    result = run(engine(ws, home), "git worktree add -q trees/topic && echo work > trees/topic/w.txt")
    assert result["status"] == "success", result
    assert "not kept" not in result["data"].get("sandbox", ""), result
    assert git(ws / "trees" / "topic", "status", "--porcelain", home=home).stdout == "?? w.txt\n"
    assert "trees/topic" in git(ws, "worktree", "list", home=home).stdout


def test_a_command_whose_every_change_is_a_control_path_does_not_read_as_ok(place: tuple[Path, Path]) -> None:
    home, ws = place
    (ws / "build").mkdir()
    assert git(ws / "build", "init", "-q", "nested", home=home).returncode == 0
    result = run(engine(ws, home), "printf '#!/bin/sh\\n' > build/nested/.git/hooks/pre-commit")
    assert result["status"] == "error"
    assert "NOT applied: every change was a control path" in result["data"]["error_message"]
    assert "build/nested/.git/hooks/pre-commit: git runs hooks" in result["data"]["sandbox"]
