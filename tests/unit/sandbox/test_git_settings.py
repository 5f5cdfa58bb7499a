"""Git read by its settings: every workspace path the configuration git would apply names is found, from the
system, global, repository and included files, with LACA's own parser (no git is run)."""

from __future__ import annotations

from pathlib import Path

from framework_core.sandbox.git_settings import read_settings


def repo(ws: Path, config: str) -> None:
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "config").write_text(config)


def test_hooks_path_and_an_included_file_in_the_workspace_are_named(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    repo(ws, "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../.gitconfig\n")
    (ws / ".gitconfig").write_text("[core]\n\tfsmonitor = tools/monitor.sh\n[alias]\n\tst = !./scripts/st.sh -s\n")
    found = read_settings(ws, [".git"], home, {"GIT_CONFIG_NOSYSTEM": "1"}).named
    assert set(found) == {".githooks", ".gitconfig", "tools/monitor.sh", "scripts/st.sh"}
    assert found[".githooks"].startswith("core.hookspath in ") and "runs the hooks" in found[".githooks"]
    assert "alias.st" in found["scripts/st.sh"] and "git runs it" in found["scripts/st.sh"]
    assert "reads it as settings" in found[".gitconfig"]


def test_global_settings_apply_to_every_repository_and_include_if_counts_as_met(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text('[includeIf "gitdir:~/never/"]\n\tpath = ' + str(ws / "team.gitconfig") + "\n")
    (home / ".config" / "git" / "config").write_text("[core]\n\thooksPath = .hooks\n")
    repo(ws, "[user]\n\tname = x\n")
    (ws / "sub").mkdir()
    repo(ws / "sub", "[commit]\n\ttemplate = .gitmessage\n[core]\n\tattributesFile = ../attrs\n")
    (ws / "team.gitconfig").write_text('[filter "lfsx"]\n\tsmudge = ./bin/smudge %f\n')
    found = read_settings(ws, [".git", "sub/.git"], home, {"GIT_CONFIG_NOSYSTEM": "1"}).named
    assert {".hooks", "sub/.hooks", "team.gitconfig", "bin/smudge", "sub/bin/smudge", "sub/.gitmessage",
            "attrs"} <= set(found)
    assert found[".hooks"].startswith("core.hookspath in ~/.config/git/config")


def test_settings_naming_paths_outside_the_workspace_or_nothing_name_nothing(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    repo(ws, "[core]\n\thooksPath = ~/hooks\n\teditor = vim\n\tpager = less -R\n[alias]\n\tco = checkout\n"
             "[remote \"origin\"]\n\turl = https://example.invalid/r.git\n")
    reading = read_settings(ws, [".git"], home, {"GIT_CONFIG_NOSYSTEM": "1"})
    assert reading.named == {}
    assert str(ws / ".git" / "config") in reading.files  # the cache re-checks what it read


def test_a_config_git_cannot_read_and_an_include_loop_add_nothing_and_do_not_hang(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    repo(ws, "[include]\n\tpath = a.inc\n")
    (ws / ".git" / "a.inc").write_text("[include]\n\tpath = config\n[core]\n\thooksPath = h\n")
    (home / ".gitconfig").write_text("[broken\n")
    found = read_settings(ws, [".git"], home, {"GIT_CONFIG_NOSYSTEM": "1"}).named
    assert set(found) == {".git/a.inc", ".git/config", "h"}  # the loop is cut; what it names is still named
