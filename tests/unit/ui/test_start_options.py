"""The command line's words through the real parser (`cli.parse`): a first message, every option and
subcommand, usage errors; --allow, modes, the provider whose key is set, session ids by prefix, and hints in
the words of how LACA was started."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from framework_core.app import subcommands
from framework_core.app.cli import Parsed, UsageError, command, parse
from framework_core.app.startup import allow_rules, pick_provider
from framework_core.config.load import Overrides, load_config
from framework_core.core.approval import ScriptedApprover
from framework_core.core.session import find_session_by_prefix
from framework_core.errors import ConfigError
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine

EAGER = {"version", "install_completion", "show_completion", "help"}  # they act while parsing, and exit
ROOT_OPTIONS = [p for p in command().params if p.name not in EAGER]
HANDLERS = {("policy", "check"): subcommands.policy_check, ("config", "init"): subcommands.config_init,
            ("config", "show"): subcommands.config_show, ("audit", "verify"): subcommands.audit_verify,
            ("audit", "replay"): subcommands.audit_replay, ("doctor",): subcommands.doctor}


def values(argv: list[str]) -> dict:
    parsed = parse(argv)
    assert isinstance(parsed, Parsed)
    return parsed.values


def test_words_after_the_options_are_the_first_message() -> None:
    parsed = parse(["--provider", "anthropic", "fix", "the failing test"])
    assert isinstance(parsed, Parsed) and parsed.command is None
    assert parsed.values["message"] == "fix the failing test" and parsed.values["provider"] == "anthropic"
    assert values(["fix", "--model", "m", "it"])["message"] == "fix it"  # options may come between words
    assert values(["--", "-p is in my message"])["message"] == "-p is in my message"
    after = values(["fix", "--", "--provider", "x"])
    assert after["message"] == "fix --provider x" and after["provider"] is None  # after --, words only
    assert values(["fix", "policy"])["message"] == "fix policy"  # only a first word names a subcommand
    assert values(["--", "doctor"])["message"] == "doctor"


def option_argv(opt: Any) -> tuple[list[str], object]:
    """A command line giving `opt`, and the value it should parse to."""
    if opt.is_flag:
        return [opt.opts[-1]], True
    choices = opt.type_descriptor.choices
    value = choices[-1] if choices else "v1"
    return [opt.opts[-1], value], [value] if opt.multiple else value


@pytest.mark.parametrize("opt", ROOT_OPTIONS, ids=lambda o: o.opts[-1])
def test_every_root_option_parses_to_its_value(opt: Any) -> None:
    argv, want = option_argv(opt)
    got = values([*argv, "--no-mcp"] if opt.name != "no_mcp" else argv)
    assert got[opt.name] == want and all(got[o.name] in (None, False, "text") for o in ROOT_OPTIONS
                                         if o.name not in (opt.name, "no_mcp"))


def test_short_forms_defaults_and_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    got = values(["-c", "-p", "-"])
    assert got["continue_"] is True and got["prompt"] == "-"
    assert values([])["output_format"] == "text" and values([])["allow"] is None
    assert values(["--allow", "pytest", "--allow", "npm run test"])["allow"] == ["pytest", "npm run test"]
    assert values(["--resume"])["resume"] == ""  # no ID: list the sessions
    assert values(["--resume", "-p", "x"])["resume"] == ""
    assert values(["--resume", "ab12", "fix"]) == {**values(["fix"]), "resume": "ab12"}
    assert values(["--output-format=json", "-p", "x"])["output_format"] == "json"
    assert values(["--print=-x is odd"])["prompt"] == "-x is odd"
    assert values(["-p", "-x is odd"])["prompt"] == "-x is odd"  # a value may start with -
    assert parse(["-c", "-v"]) == 0 and capsys.readouterr().out.startswith("laca ")  # --version acts at once


def test_parsing_imports_no_pydantic() -> None:
    """typer would coerce each value through a pydantic TypeAdapter: 60-90 ms before the REPL's prompt."""
    import subprocess
    import sys

    code = ("import sys; from framework_core.app.cli import parse; "
            "parse(['--sandbox', 'off', '--allow', 'pytest', '-c', 'fix', 'it']); print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('pydantic', 'rich', 'yaml')))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_the_tables_name_every_subcommand() -> None:
    def paths(cmd: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
        if not hasattr(cmd, "list_commands"):
            return {prefix}
        return {p for name in cmd.list_commands(None) for p in paths(cmd.get_command(None, name), (*prefix, name))}
    assert paths(command()) == set(HANDLERS)


@pytest.mark.parametrize("path", HANDLERS, ids=" ".join)
def test_every_subcommand_reaches_its_handler(path: tuple[str, ...]) -> None:
    parsed = parse(["--provider", "anthropic", *path])
    assert isinstance(parsed, Parsed)
    assert parsed.command is HANDLERS[path] and parsed.values["provider"] == "anthropic"


def test_subcommand_arguments() -> None:
    def args(argv: list[str]) -> dict:
        parsed = parse(argv)
        assert isinstance(parsed, Parsed)
        return parsed.args
    assert args(["config", "show", "--all"])["all_providers"] is True
    assert args(["config", "init", "--force"])["force"] is True
    assert args(["policy", "check", "ls -la", "rm -rf ~", "--jsonl"]) == {"commands": ["ls -la", "rm -rf ~"],
                                                                          "jsonl": True}
    assert args(["audit", "replay", "--since", "2026-01-01"]) == {"since": "2026-01-01", "workspace": None}
    group = parse(["config"])
    assert isinstance(group, Parsed) and group.command is subcommands.group_help and "show" in group.args["help"]
    assert group.args["help"].startswith("Usage: laca config") and "completion" not in group.args["help"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--bogus"], "No such option: --bogus. See laca --help."),
    (["-p"], "Option '-p' requires an argument. See laca --help."),
    (["--provider"], "Option '--provider' requires an argument. See laca --help."),
    (["--output-format", "yaml"], "Invalid value for '--output-format': 'yaml' is not one of 'text', 'json', "
                                  "'stream-json'. See laca --help."),
    (["--permission-mode", "yolo"], "Invalid value for '--permission-mode': 'yolo' is not one of"),
    (["--prov", "x"], "No such option: --prov (Possible options: --persona, --print, --provider)"),  # not guessed
    (["--trust=yes"], "Option '--trust' does not take a value. See laca --help."),
    (["config", "show", "--bogus"], "config show: No such option: --bogus. See laca config show --help."),
    (["config", "nope"], "config: No such command 'nope'. See laca config --help."),
    (["doctor", "extra"], "doctor: Got unexpected extra argument(s) (extra). See laca doctor --help."),
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
