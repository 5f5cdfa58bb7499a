"""The command line's words through the real parser (`cli.parse`): a first message, every option and
subcommand, usage errors; --allow, modes, the provider whose key is set, session ids by prefix, and hints in
the words of how LACA was started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.app.cli import HANDLERS, UsageError, parse
from framework_core.app.cli_options import COMMANDS, OPTIONS, Command, Opt
from framework_core.config.load import Overrides, load_config
from framework_core.errors import ConfigError
from framework_core.lial_core import ToolRequest
from framework_core.app.startup import allow_rules, pick_provider
from framework_core.core.session import find_session_by_prefix
from framework_core.teps import TEPSEngine


def test_words_after_the_options_are_the_first_message() -> None:
    parsed = parse(["--provider", "anthropic", "fix", "the failing test"])
    assert parsed.command is None and parsed.values["message"] == "fix the failing test"
    assert parsed.values["provider"] == "anthropic"
    assert parse(["fix", "--model", "m", "it"]).values["message"] == "fix it"  # options may come between words
    assert parse(["--", "-p is in my message"]).values["message"] == "-p is in my message"
    after = parse(["fix", "--", "--provider", "x"]).values
    assert after["message"] == "fix --provider x" and after["provider"] is None  # after --, words only
    assert parse(["fix", "policy"]).command is None  # only a first word names a subcommand
    assert parse(["--", "doctor"]).values["message"] == "doctor"


def option_argv(opt: Opt) -> tuple[list[str], object]:
    """A command line giving `opt`, and the value it should parse to."""
    if not opt.takes_value:
        return [opt.decls[-1]], True
    value = opt.choices[-1] if opt.choices else "v1"
    return [opt.decls[-1], value], [value] if opt.multiple else value


@pytest.mark.parametrize("opt", OPTIONS, ids=lambda o: o.decls[-1])
def test_every_root_option_parses_to_its_value(opt: Opt) -> None:
    argv, want = option_argv(opt)
    values = parse([*argv, "--no-mcp"] if opt.dest != "no_mcp" else argv).values
    assert values[opt.dest] == want and all(values[o.dest] in (None, False, "text") for o in OPTIONS
                                             if o.dest not in (opt.dest, "no_mcp"))


def test_short_forms_defaults_and_repeats() -> None:
    values = parse(["-c", "-p", "-", "-v"]).values
    assert values["continue_"] is True and values["prompt"] == "-" and values["version"] is True
    assert parse([]).values["output_format"] == "text" and parse([]).values["allow"] is None
    assert parse(["--allow", "pytest", "--allow", "npm run test"]).values["allow"] == ["pytest", "npm run test"]
    assert parse(["--resume"]).values["resume"] == ""  # no ID: list the sessions
    assert parse(["--resume", "-p", "x"]).values["resume"] == ""
    assert parse(["--resume", "ab12", "fix"]).values == {**parse(["fix"]).values, "resume": "ab12"}
    assert parse(["--output-format=json", "-p", "x"]).values["output_format"] == "json"
    assert parse(["--print=-x is odd"]).values["prompt"] == "-x is odd"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.path))
def test_every_subcommand_reaches_its_handler(command: Command) -> None:
    parsed = parse(["--provider", "anthropic", *command.path])
    assert parsed.command is HANDLERS[command.path] and parsed.values["provider"] == "anthropic"


def test_subcommand_arguments() -> None:
    assert parse(["config", "show", "--all"]).args.all_providers is True  # type: ignore[union-attr]
    assert parse(["config", "init", "--force"]).args.force is True  # type: ignore[union-attr]
    check = parse(["policy", "check", "ls -la", "rm -rf ~", "--jsonl"]).args
    assert check.commands == ["ls -la", "rm -rf ~"] and check.jsonl is True  # type: ignore[union-attr]


@pytest.mark.parametrize(("argv", "message"), [
    (["--bogus"], "unrecognized arguments: --bogus. See laca --help."),
    (["-p"], "argument -p/--print: expected one argument (a value that starts with - is given with =, as in "
             "--print=-x). See laca --help."),
    (["--provider"], "argument --provider: expected one argument (a value that starts with - is given with =, "
                     "as in --provider=-x). See laca --help."),
    (["--output-format", "yaml"], "argument --output-format: invalid choice: 'yaml'"),
    (["--permission-mode", "yolo"], "argument --permission-mode: invalid choice: 'yolo'"),
    (["--prov", "x"], "unrecognized arguments: --prov. See laca --help."),  # no abbreviations: a typo is not guessed
    (["--trust=yes"], "argument --trust: ignored explicit argument 'yes'"),
    (["config", "show", "--bogus"], "config show: unrecognized arguments: --bogus. See laca config show --help."),
    (["config", "nope"], "config: argument COMMAND: invalid choice: 'nope'"),
    (["doctor", "extra"], "doctor: unrecognized arguments: extra. See laca doctor --help."),
])
def test_usage_errors_name_the_problem_and_the_help(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(argv)
    assert message in str(caught.value) and "\n" not in str(caught.value)


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
