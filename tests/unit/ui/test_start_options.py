"""The command line's words: a first message, --version, --allow, modes, the provider whose key is set,
session ids by prefix, and hints in the words of how LACA was started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.app.cli_options import FastParseError, fast_parse
from framework_core.config.load import Overrides, load_config
from framework_core.errors import ConfigError
from framework_core.lial_core import ToolRequest
from framework_core.app.startup import allow_rules, find_session_by_prefix, pick_provider
from framework_core.wording import invocation
from framework_core.teps import TEPSEngine


def test_words_after_the_options_are_the_first_message() -> None:
    values = fast_parse(["--provider", "anthropic", "fix", "the failing test"])
    assert values is not None and values["message"] == "fix the failing test" and values["provider"] == "anthropic"
    assert fast_parse(["--", "-p is in my message"])["message"] == "-p is in my message"  # type: ignore[index]
    assert fast_parse(["policy", "check", "ls"]) is None  # a subcommand goes to typer
    assert fast_parse(["--allow", "pytest", "--allow", "npm run test", "-p", "x"])["allow"] == ["pytest", "npm run test"]  # type: ignore[index]
    assert fast_parse(["--version"])["version"] is True  # type: ignore[index]
    with pytest.raises(FastParseError, match="--output-format must be one of"):
        fast_parse(["--output-format", "yaml"])


def test_allow_patterns_read_as_rule_file_lines() -> None:
    rules = allow_rules(["pytest -q", "tool:mcp__git__*", "Bash(npm run test:*)"])
    assert rules[0].prefix == ("pytest", "-q") and rules[0].matches_command("pytest -q tests")
    assert not rules[0].matches_command("pytest -q; rm -rf x")  # an allow rule never widens to a chain
    assert rules[1].matches_tool("mcp__git__git_status")
    assert rules[2].prefix == ("npm", "run", "test")
    with pytest.raises(ConfigError):
        allow_rules(["  "])


def test_the_provider_whose_key_is_set_is_picked(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    loaded = load_config(workspace, Overrides())
    notes = pick_provider(loaded)
    assert loaded.config.llm_provider == "anthropic" and "ANTHROPIC_API_KEY is set" in notes[0]
    named = load_config(workspace, Overrides(provider="openai"))
    assert pick_provider(named) == [] and named.config.llm_provider == "openai"  # the user's choice stands
    monkeypatch.setenv("GEMINI_API_KEY", "g")
    several = load_config(workspace, Overrides())
    assert "could be used too" in pick_provider(several)[0]


def test_hints_name_make_run_only_when_make_started_laca(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    code = "from framework_core.wording import invocation; print(invocation('--continue'))"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    env.pop("MAKELEVEL", None)
    direct = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert direct.stdout.strip() == "laca --continue"
    # MAKELEVEL is inherited by everything under `make test`: the parent must be make itself
    under = subprocess.run([sys.executable, "-c", code], env={**env, "MAKELEVEL": "1"}, capture_output=True, text=True)
    assert under.stdout.strip() == "laca --continue"
    if shutil.which("make"):
        (tmp_path / "hint.py").write_text(code + "\n")  # no shell syntax in the recipe: make runs it itself
        (tmp_path / "Makefile").write_text(f"run:\n\t@{sys.executable} {tmp_path / 'hint.py'}\n")
        made = subprocess.run(["make", "-s", "-C", str(tmp_path), "run"], env=env, capture_output=True, text=True)
        assert made.stdout.strip() == 'make run ARGS="--continue"'


def test_sessions_by_a_unique_start_or_end_of_their_id(isolated_env: Path) -> None:
    folder = Path(os.environ["XDG_DATA_HOME"]) / "laca" / "sessions"
    folder.mkdir(parents=True)
    for sid in ("20260101-101010-abcd", "20260101-111111-ef01"):
        (folder / f"{sid}.jsonl").write_text('{"type": "meta", "workspace": "/w"}\n'
                                             '{"type": "message", "message": {"role": "user", "content": "hi"}}\n')
    data = folder.parent
    assert find_session_by_prefix(data, "20260101-10").stem == "20260101-101010-abcd"
    assert find_session_by_prefix(data, "ef01").stem == "20260101-111111-ef01"
    with pytest.raises(ConfigError, match="matches 2 sessions"):
        find_session_by_prefix(data, "20260101")
    with pytest.raises(ConfigError, match="no session 'zz'"):
        find_session_by_prefix(data, "zz")


def write(path: str) -> ToolRequest:
    return ToolRequest("w", "writeFile", {"path": path, "content": "x\n"}, "Intent: write")


def test_accept_edits_writes_inside_the_workspace_without_asking(workspace: Path) -> None:
    approver = ScriptedApprover(["n", "n"])
    teps = TEPSEngine({}, workspace=workspace, approver=approver)
    teps.mode = "accept-edits"
    assert teps.execute_batch([write("a.txt")])[0].status == "success" and approver.seen == []
    teps.execute_batch([write(".mcp.json")])  # a control path still asks
    teps.execute_batch([ToolRequest("b", "executeBashCommand", {"command": "touch b"}, "b")])  # commands ask
    assert len(approver.seen) == 2


def test_plan_mode_runs_only_what_reads(workspace: Path) -> None:
    (workspace / "r.txt").write_text("read me\n")
    teps = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover())
    teps.mode = "plan"
    read, wrote, ran, listed = teps.execute_batch([
        ToolRequest("r", "readFile", {"path": "r.txt"}, "b"), write("p.txt"),
        ToolRequest("c", "executeBashCommand", {"command": "touch c"}, "b"),
        ToolRequest("l", "executeBashCommand", {"command": "ls"}, "b")])
    assert read.status == "success" and listed.status == "success"
    assert wrote.status == ran.status == "declined_by_user" and "plan mode" in wrote.data["message"]
    assert not (workspace / "p.txt").exists() and not (workspace / "c").exists()
