"""git commands that run programs the configuration names: signature checks and index refreshes always ask;
`git status`, `git diff`, `log -p` and `show` ask only when the caller says the workspace repository's config
names such a program (`CallFacts.git_runs`, read from the real config by `sandbox/git_runs.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.policy.classifier import classify_command
from framework_core.policy.decide import CallFacts, PolicyState, decide
from framework_core.policy.levels import Level
from framework_core.sandbox.git_runs import workspace_git_runs
from framework_core.sandbox.gitconfig import read_time_programs


@pytest.mark.parametrize("cmd", ["git log --show-signature", "git verify-commit HEAD", "git verify-tag v1.0",
                                 "git tag -v v1.0", "git describe --dirty", "git log --format=%G?",
                                 "git diff --textconv", "git log -p --textconv", "git show --textconv HEAD"])
def test_forms_that_run_configured_programs_always_ask(cmd: str) -> None:
    assert classify_command(cmd).level > Level.SAFE


def action(cmd: str, runs: tuple[str, ...]) -> str:
    return decide(CallFacts("executeBashCommand", "bash", command=cmd, git_runs=runs), PolicyState()).action


@pytest.mark.parametrize(("cmd", "runs"), [
    ("git status", ("core.fsmonitor",)), ("git diff", ("core.fsmonitor",)), ("git status", ("filter.lfs.clean",)),
    ("git diff", ("diff.pdf.textconv",)), ("git log -p", ("diff.pdf.textconv",)),
    ("git show HEAD", ("diff.x.command",)),
    ("git log -p", ("include.path",)), ("ls && git status", ("core.fsmonitor",)),
])
def test_reading_commands_ask_where_the_repository_configures_a_program(cmd: str, runs: tuple[str, ...]) -> None:
    assert action(cmd, runs) == "ask"


@pytest.mark.parametrize(("cmd", "runs"), [
    ("git status", ()), ("git diff", ()), ("git log -p", ()), ("git log --oneline", ("diff.pdf.textconv",)),
    ("git status", ("diff.pdf.textconv",)), ("ls", ("core.fsmonitor",)),
])
def test_they_stay_safe_where_nothing_is_configured_for_them(cmd: str, runs: tuple[str, ...]) -> None:
    assert action(cmd, runs) == "allow"


def test_the_keys_are_read_from_the_config_as_git_reads_it(tmp_path: Path) -> None:
    assert read_time_programs(b"[core]\n\tfsmonitor = .git/fsm.sh\n[user]\n\tname = x\n") == ("core.fsmonitor",)
    assert read_time_programs(b"[core]\n\tfsmonitor = false\n") == ()
    assert read_time_programs(b'[diff "pdf"]\n\ttextconv = pdftotext\n') == ("diff.pdf.textconv",)
    assert read_time_programs(b"[core\n") == ("an unreadable configuration",)
    assert workspace_git_runs(tmp_path) == ()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n\tbare = false\n")
    assert workspace_git_runs(tmp_path) == ()
    (tmp_path / ".git" / "config").write_text("[core]\n\tfsmonitor\n")
    assert workspace_git_runs(tmp_path) == ("core.fsmonitor",)


def test_a_worktrees_git_file_leads_to_its_config_and_the_common_one(tmp_path: Path) -> None:
    common = tmp_path / "main.git"
    gitdir = common / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    (common / "config").write_text('[filter "x"]\n\tclean = ./x.sh\n')
    work = tmp_path / "wt"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {gitdir}\n")
    assert workspace_git_runs(work) == ("filter.x.clean",)
