"""Through the real sandbox and TEPS, with HOME and the workspace outside /tmp: in auto mode a change set
holding a file that runs with nothing named is held and asked about before anything of it lands; files git's
settings name (a hooks folder, an included config) never land from a command and are said; ordinary edits and
a Makefile land, the Makefile named."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from framework_core.core.approval import DeclineAllApprover, ScriptedApprover
from framework_core.lial_core import ToolRequest
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.teps import TEPSEngine

pytestmark = pytest.mark.skipif(not probe().available or not probe().overlay,
                                reason="no overlay sandbox on this machine: " + "; ".join(probe().missing()))
PTH = ".venv/lib/python3.11/site-packages/zz.pth"


@pytest.fixture
def place(outside_tmp: Path) -> tuple[Path, Path]:
    home, ws = outside_tmp / "home", outside_tmp / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def engine(ws: Path, home: Path, approver: object, mode: str = "auto") -> TEPSEngine:
    box = Sandbox("workspace-write", ws.resolve(), home=home, use_overlay=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    teps = TEPSEngine({"command_timeout_s": 30}, workspace=ws, approver=approver, env=env, sandbox=box)
    teps.mode = mode
    return teps


def bash(cmd: str, rid: str = "r") -> ToolRequest:
    return ToolRequest(rid, "executeBashCommand", {"command": cmd}, "Intent: test")


def test_auto_mode_holds_a_pth_and_nothing_of_its_change_set_lands(place: tuple[Path, Path]) -> None:
    home, ws = place
    decliner = DeclineAllApprover()
    teps = engine(ws, home, decliner)
    (ws / "update.sh").write_text(f"mkdir -p {os.path.dirname(PTH)}\necho 'import os' > {PTH}\necho x > notes.txt\n")
    result = teps.execute(bash("sh update.sh"))  # a script the policy cannot see into, as `python3 tools/update.py`
    text = str(result.data)
    assert result.status == "error" and "held, NOT applied" in text, text
    assert "zz.pth" in text and "Python runs its import lines" in text
    assert not (ws / PTH).exists() and not (ws / "notes.txt").exists()
    assert len(decliner.declined) == 1  # one-shot mode counts it: exit 3


def test_a_yes_to_the_held_change_set_lands_all_of_it(place: tuple[Path, Path]) -> None:
    home, ws = place
    approver = ScriptedApprover(["y"])
    teps = engine(ws, home, approver)
    (ws / "update.sh").write_text("mkdir -p .vscode\necho '{}' > .vscode/tasks.json\necho x > notes.txt\n")
    result = teps.execute(bash("sh update.sh"))
    assert result.status == "success", result.data
    assert (ws / ".vscode" / "tasks.json").exists() and (ws / "notes.txt").exists()
    title, diff = approver.reviewed[0]
    assert ".vscode/tasks.json" in title and "RUNS WITH NOTHING NAMED" in diff


def test_ordinary_edits_and_a_makefile_land_in_auto_mode_the_makefile_named(place: tuple[Path, Path]) -> None:
    home, ws = place
    teps = engine(ws, home, DeclineAllApprover())
    result = teps.execute(bash("printf 'all:\\n\\ttrue\\n' > Makefile && echo x > src.txt"))
    assert result.status == "success", result.data
    assert (ws / "Makefile").exists() and (ws / "src.txt").exists()
    assert "Makefile" in str(result.data) and "runs later" in str(result.data)


def test_writefile_of_a_folder_open_task_asks_in_auto_mode_and_not_in_accept_edits(place: tuple[Path, Path]) -> None:
    home, ws = place
    write = ToolRequest("w", "writeFile", {"path": ".vscode/tasks.json", "content": "{}\n"}, "Intent: test")
    decliner = DeclineAllApprover()
    assert engine(ws, home, decliner).execute(write).status == "declined_by_user"
    note = decliner.declined[0].control_note or ""
    assert note.startswith("Auto mode asks: this file runs with nothing named") and "VS Code" in note, note
    assert not (ws / ".vscode" / "tasks.json").exists()
    assert engine(ws, home, DeclineAllApprover(), mode="accept-edits").execute(write).status == "success"


def test_files_git_settings_name_do_not_land_and_are_said(place: tuple[Path, Path]) -> None:
    home, ws = place
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "objects").mkdir()
    (ws / ".git" / "refs").mkdir()
    (ws / ".git" / "config").write_text("[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../.gitconfig\n")
    teps = engine(ws, home, ScriptedApprover(["y"]), mode="ask")
    result = teps.execute(bash("mkdir -p .githooks && echo 'echo pwned' > .githooks/pre-commit && "
                               "printf '[core]\\n\\tfsmonitor = x\\n' > .gitconfig && echo ok > kept.txt"))
    text = str(result.data)
    assert not (ws / ".githooks" / "pre-commit").exists() and not (ws / ".gitconfig").exists()
    assert (ws / "kept.txt").read_text() == "ok\n"
    assert ".githooks" in text and "core.hookspath" in text and ".gitconfig" in text, text
    write = ToolRequest("w", "writeFile", {"path": ".githooks/post-checkout", "content": "x\n"}, "Intent: test")
    asker = ScriptedApprover(["n"])
    assert engine(ws, home, asker, mode="accept-edits").execute(write).status == "declined_by_user"
    assert "core.hookspath" in " ".join(asker.seen[0].reasons)


def test_a_new_environment_lands_named_and_a_pth_planted_in_an_existing_one_is_held(place: tuple[Path, Path]) -> None:
    home, ws = place
    (ws / "mk.sh").write_text("mkdir -p new/bin new/lib\necho home=/usr > new/pyvenv.cfg\necho x > new/bin/activate\n"
                              "echo 'import os' > new/lib/a.pth\n")
    result = engine(ws, home, DeclineAllApprover()).execute(bash("sh mk.sh"))
    assert result.status == "success" and (ws / "new" / "bin" / "activate").exists(), result.data
    assert "runs later" in str(result.data)
    (ws / "plant.sh").write_text("echo 'import os' > new/lib/b.pth\n")
    held = engine(ws, home, DeclineAllApprover()).execute(bash("sh plant.sh"))
    assert "held, NOT applied" in str(held.data) and not (ws / "new" / "lib" / "b.pth").exists()


def test_a_new_branch_carrying_laca_rules_and_an_envrc_is_named(place: tuple[Path, Path]) -> None:
    home, ws = place
    git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    def g(*args: str) -> None:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", **git}
        subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
    g("init", "-q", "-b", "main")
    (ws / "a.txt").write_text("a\n")
    g("add", "a.txt")
    g("commit", "-q", "-m", "one")
    (ws / "branch.sh").write_text(
        "set -e\nexport GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e.invalid\n"
        "export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e.invalid\n"
        "git checkout -q -b evil\nmkdir -p .laca\necho 'allow: []' > .laca/rules.yaml\necho 'echo hi' > .envrc\n"
        "git add -f .laca/rules.yaml .envrc\ngit commit -q -m planted\ngit checkout -q main\n")
    result = engine(ws, home, ScriptedApprover(["y"]), mode="ask").execute(bash("sh branch.sh"))
    text = str(result.data)
    assert "refs/heads/evil (new or moved) holds what a checkout would put in the workspace unjudged" in text, text
    assert ".laca/rules.yaml (LACA's own file)" in text and ".envrc (direnv runs it" in text
