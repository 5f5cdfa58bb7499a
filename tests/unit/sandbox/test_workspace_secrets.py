"""Credential-shaped files inside the workspace read as empty inside the sandbox (a project `.npmrc` as a copy
without its tokens), for Safe and approved commands alike; `sandbox.workspace_secrets_visible` shows one.

HOME and the workspace are real folders outside /tmp (the repository's `.pytest-homes/`, ignored by git)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.policy.decide import PolicyState
from framework_core.policy.rules import RuleSet
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.sandbox.workspace_secrets import workspace_secrets
from framework_core.teps import TEPSEngine

pytestmark = pytest.mark.skipif(not probe().available,
                                reason="no sandbox on this machine: " + "; ".join(probe().missing()))

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def base() -> Iterator[Path]:
    folder = ROOT / ".pytest-homes" / uuid.uuid4().hex[:12]
    (folder / "home").mkdir(parents=True)
    ws = folder / "ws"
    (ws / "config").mkdir(parents=True)
    (ws / ".env").write_text("DB_PASSWORD=ENV-SECRET\n")
    (ws / ".env.example").write_text("DB_PASSWORD=changeme\n")
    (ws / "config" / "prod.key").write_text("KEY-SECRET\n")
    (ws / ".npmrc").write_text("registry=https://npm.example/\n//npm.example/:_authToken=NPM-WS-SECRET\n")
    (ws / "app.py").write_text("print('hi')  # no SECRET here\n")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def engine(base: Path, answers: int = 0, visible: tuple[str, ...] = ()) -> TEPSEngine:
    ws = (base / "ws").resolve()
    sandbox = Sandbox("workspace-write", ws, home=base / "home", cache_root=base / "cache", secrets_visible=visible)
    env = {"PATH": os.environ["PATH"], "HOME": str(base / "home"), "LANG": "C.UTF-8"}
    return TEPSEngine({}, workspace=ws, approver=ScriptedApprover(["y"] * answers), env=env, sandbox=sandbox,
                      policy=PolicyState(rules=RuleSet(), allow_dangerous=True))


def bash(teps: TEPSEngine, command: str) -> dict:
    return teps.execute_tool({"request_id": "r", "tool_name": "executeBashCommand",
                              "parameters": {"command": command}, "icerc_full_text": "test"})["data"]


def test_the_scan_finds_credential_shapes_and_not_their_templates(base: Path) -> None:
    found = {s.rel: s.sanitiser for s in workspace_secrets(base / "ws")}
    assert found == {".env": None, "config/prod.key": None, ".npmrc": "npmrc"}


def test_an_approved_command_reads_workspace_secrets_as_empty_and_is_told(base: Path) -> None:
    teps = engine(base, answers=1)
    out = bash(teps, "cat .env config/prod.key .env.example .npmrc app.py; echo done > out.txt")
    assert "ENV-SECRET" not in out["stdout"] and "KEY-SECRET" not in out["stdout"]
    assert "NPM-WS-SECRET" not in out["stdout"] and "registry=https://npm.example/" in out["stdout"]
    assert "changeme" in out["stdout"] and "print('hi')" in out["stdout"]
    assert ".env" in out["sandbox"] and "workspace_secrets_visible" in out["sandbox"]
    assert (base / "ws" / "out.txt").read_text() == "done\n"  # ordinary work lands
    assert (base / "ws" / ".env").read_text() == "DB_PASSWORD=ENV-SECRET\n"  # the real file is untouched


def test_a_safe_command_sees_them_empty_too(base: Path) -> None:
    teps = engine(base)
    out = bash(teps, "grep -r SECRET .")
    assert "app.py" in out["stdout"]  # it ran, without a question, and read the workspace
    assert "ENV-SECRET" not in out["stdout"] and "KEY-SECRET" not in out["stdout"]


def test_a_file_the_user_made_visible_is_shown(base: Path) -> None:
    teps = engine(base, answers=1, visible=(".env",))
    out = bash(teps, "cat .env config/prod.key")
    assert "ENV-SECRET" in out["stdout"] and "KEY-SECRET" not in out["stdout"]


def test_a_dotfiles_workspace_keeps_what_the_home_runs_from_commands(base: Path) -> None:
    """`~/.bashrc -> <workspace>/bashrc`: a command's change to it does not land, even in auto mode; the rest
    of the workspace is ordinary data."""
    ws = (base / "ws").resolve()
    (ws / "bashrc").write_text("alias ll='ls -l'\n")
    (base / "home" / ".bashrc").symlink_to(ws / "bashrc")
    teps = engine(base, answers=1)
    out = bash(teps, "echo 'touch /tmp/pwned' >> bashrc; echo notes > notes.txt")
    assert (ws / "bashrc").read_text() == "alias ll='ls -l'\n"
    assert (ws / "notes.txt").read_text() == "notes\n"
    assert "your home links ~/.bashrc here" in out["sandbox"], out


def test_without_an_overlay_git_redirections_made_by_a_command_are_removed(base: Path) -> None:
    """Direct-write mode (no overlay): the files a command made are judged by the same gate afterwards."""
    import subprocess

    ws = (base / "ws").resolve()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "vendor" / "lib" / ".git" / "hooks").mkdir(parents=True)
    (ws / "vendor" / "lib" / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")  # the user's own, kept
    sandbox = Sandbox("workspace-write", ws, home=base / "home", cache_root=base / "cache", use_overlay=False)
    env = {"PATH": os.environ["PATH"], "HOME": str(base / "home"), "LANG": "C.UTF-8"}
    teps = TEPSEngine({}, workspace=ws, approver=ScriptedApprover(["y"]), env=env, sandbox=sandbox,
                      policy=PolicyState(rules=RuleSet(), allow_dangerous=True))
    out = bash(teps, "python3 -c \"import os; open('.git/commondir','w').write('../evil'); os.makedirs('inner', "
                     "exist_ok=True); open('inner/.git','w').write('gitdir: ../x'); open('vendor/new.txt','w')"
                     ".write('data')\"")
    assert out["exit_code"] == 0, out
    assert not (ws / ".git" / "commondir").exists() and not (ws / "inner" / ".git").exists()
    assert (ws / "vendor" / "new.txt").read_text() == "data"
    assert (ws / "vendor" / "lib" / ".git" / "hooks" / "pre-commit").exists()


def test_a_secret_made_between_two_commands_is_hidden_from_the_second(base: Path) -> None:
    teps = engine(base, answers=2)
    assert "ENV-SECRET" not in bash(teps, "cat .env")["stdout"]
    (base / "ws" / "config" / ".env.local").write_text("TOKEN=LATE-SECRET\n")  # the user, in an editor
    out = bash(teps, "cat config/.env.local; echo done")
    assert "LATE-SECRET" not in out["stdout"] + out["stderr"] and "done" in out["stdout"], out


def test_a_scan_holds_until_a_folder_it_read_changes(base: Path) -> None:
    from framework_core.sandbox.workspace_secrets import SecretScan

    ws = base / "ws"
    (ws / "deep" / "er").mkdir(parents=True)
    scan = SecretScan.of(ws, settle_ns=0)  # its folders count as settled at once (real scans wait 2 s)
    assert scan.holds(ws) and {s.rel for s in scan.secrets} == {".env", "config/prod.key", ".npmrc"}
    (ws / "app.py").write_text("changed content, same names\n")
    assert scan.holds(ws)
    (ws / "deep" / "er" / "id_rsa").write_text("KEY\n")  # in an empty folder, two levels down
    assert not scan.holds(ws)
    assert "deep/er/id_rsa" in {s.rel for s in SecretScan.of(ws, settle_ns=0).secrets}
    scan = SecretScan.of(ws, settle_ns=0)
    (ws / "config" / "prod.key").rename(ws / "config" / "prod.key.bak")
    assert not scan.holds(ws)
    assert not SecretScan.of(ws).holds(ws)  # folders changed within the last 2 s: not trusted yet
