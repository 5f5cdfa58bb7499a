"""The approval panel as the user sees it, at 60x20 and 120x40: the same words and the scope of `a` for every
kind of call, the decisive reason on screen, and the model's stated risk beside the policy's reading."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from framework_core.core.approval import MCP_WARNING, ApprovalRequest
from framework_core.lial_core import ToolRequest
from framework_core.policy.kinds import GrantOption
from framework_core.policy.levels import Level
from framework_core.tools.base import ActionPreview
from framework_core.ui.approval_view import fitted_panel, panel_rows, question_text, risk_mismatch
from framework_core.ui.console import THEME

SANDBOX = "Runs in the sandbox: the workspace is writable (changes can be undone), everything else read-only; " \
          "no network; credentials hidden."


def screen(req: ApprovalRequest, width: int, height: int) -> list[str]:
    """The rows on screen once the question is asked: the fitted panel, the question, and a row for its hint."""
    console = Console(file=io.StringIO(), width=width, height=height, theme=THEME, color_system=None)
    question = question_text(req, width)
    lines = console.render_lines(fitted_panel(req, console, panel_rows(question, height)), console.options,
                                 pad=False)
    rows = ["".join(seg.text for seg in line).rstrip() for line in lines] + question.splitlines()
    assert len(rows) + 1 <= height, "\n".join(rows)  # the hint line shown on a stray key still fits
    return rows


def bash(command: str, brief: str, reasons: list[str], level: Level = Level.NEEDS_CONFIRM) -> ApprovalRequest:
    call = ToolRequest("r1", "executeBashCommand", {"command": command}, icerc_full_text=brief)
    grant = [GrantOption("exact_command", command, "executeBashCommand", f"exactly this command: {command}")]
    return ApprovalRequest(call, ActionPreview("Run command", command, "bash"), level, reasons, "builtin",
                           grant_options=grant if level < Level.DANGEROUS else [], sandbox_note=SANDBOX,
                           can_preview=True, can_unsandbox=True, can_network=True)


def mcp(tool: str = "delete_file") -> ApprovalRequest:
    name = f"mcp__fs__{tool}"
    call = ToolRequest("m1", name, {"path": "notes.txt"}, icerc_full_text="Intent: tidy\nRisk assessment: low")
    grant = [GrantOption("tool", name, name, f"every call of the tool {name}")]
    return ApprovalRequest(call, ActionPreview(f"Run {tool} on server fs", '{\n  "path": "notes.txt"\n}', "json"),
                           Level.NEEDS_CONFIRM, [f"calls {name} on server fs; its permission is 'ask'"], "mcp:fs",
                           grant_options=grant, warning=MCP_WARNING, server="fs")


def write() -> ApprovalRequest:
    call = ToolRequest("w1", "writeFile", {"path": "a.txt", "content": "x"}, icerc_full_text="Intent: write a.txt")
    grant = [GrantOption("path", "/ws/a.txt", "writeFile", "writes to exactly this file: /ws/a.txt")]
    return ApprovalRequest(call, ActionPreview("Create file a.txt (1 line)", "x", None, path="/ws/a.txt"),
                           Level.NEEDS_CONFIRM, ["writes a file"], "builtin", grant_options=grant)


def declared() -> ApprovalRequest:
    call = ToolRequest("d1", "lint", {"target": "src"}, icerc_full_text="Intent: lint")
    grant = [GrantOption("tool", "lint", "lint", "every call of the tool lint")]
    return ApprovalRequest(call, ActionPreview("Run declared tool lint", "ruff check src", "bash"),
                           Level.NEEDS_CONFIRM, ["calls lint; its permission is 'ask'"], "declared:tools.yaml",
                           grant_options=grant)


@pytest.mark.parametrize("make", [mcp, write, declared, lambda: bash("touch x", "Command: touch x", ["writes"])])
def test_every_kind_of_call_asks_in_the_same_words_with_the_scope_of_a_before_answering(make) -> None:  # noqa: ANN001
    req = make()
    text = "\n".join(screen(req, 120, 40))
    assert f"a always, this session: {req.grant_options[0].label}" in text
    assert "Allow? y once · n no · a always" in text and "Esc stop the turn" in text
    assert "allow for this chat" not in text and "Allow tool call from" not in text
    assert f"{req.preview.title} · needs confirmation" in text.splitlines()[0]


def test_an_mcp_call_names_its_server_and_keeps_the_scope_of_a_at_60x20() -> None:
    rows = screen(mcp(), 60, 20)
    text = "\n".join(rows)
    assert "Run delete_file on server fs" in rows[0] and "Server: fs   Tool: mcp__fs__delete_file" in text
    assert "a always, this session:\n    every call of the tool mcp__fs__delete_file\n" in text  # whole, on its row
    assert "Malicious MCP servers" in text  # the warning stays, on one row


def test_a_delete_with_a_brief_claiming_low_risk_is_flagged_and_stays_visible_at_60x20() -> None:
    script = "\n".join(f"echo step {i}" for i in range(30)) + "\nrm -rf build"
    reasons = [f'"echo step {i}": prints' for i in range(6)] + ['"rm -rf build": deletes files']  # the delete last
    req = bash(script, "Intent: clean up\nCommand: the build script\nRisk assessment: low, only the build folder",
               reasons)
    assert risk_mismatch(req) == "brief says low risk; the command deletes files"
    text = "\n".join(screen(req, 60, 20))
    assert "echo step 0" in text and "more lines not shown here" in text  # the action leads, folded
    assert "Brief says low risk; the command deletes files." in text
    assert '"rm -rf build": deletes files' in text  # the decisive reason
    assert "Policy: needs confirmation   Brief's risk: low" in text
    assert "a always, this session:\n    exactly this command: echo step 0 echo step 1" in text


def test_at_120x40_everything_is_there_and_the_mismatch_is_red() -> None:
    req = bash("rm notes.txt", "Intent: tidy\nCommand: rm notes.txt\nRisk: none", ['"rm notes.txt": deletes files'])
    text = "\n".join(screen(req, 120, 40))
    assert "Brief says no risk; the command deletes files." in text
    assert "⛶ Runs in the sandbox" in text and "credentials hidden." in text
    buf = io.StringIO()
    Console(file=buf, width=120, theme=THEME, color_system="standard", force_terminal=True).print(
        fitted_panel(req, Console(width=120, theme=THEME), 38))
    red = buf.getvalue().split("Brief says no risk")[0].rsplit("\x1b[", 1)[1]
    assert red.startswith("1;31m") or red.startswith("31;1m")


@pytest.mark.parametrize(("brief", "reasons", "level", "flagged"), [
    ("Risk: high, it deletes the build", ['"rm -rf build": deletes files'], Level.NEEDS_CONFIRM, False),
    ("Risk: not low", ['"rm -rf build": deletes files'], Level.NEEDS_CONFIRM, False),
    ("Risk: low", ['"touch x": writes files'], Level.NEEDS_CONFIRM, False),  # not destructive: no flag
    ("Intent: no risk field", ['"rm -rf build": deletes files'], Level.NEEDS_CONFIRM, False),
    ("Risk assessment: minimal", ['"rm -rf ~": recursive delete of your home folder'], Level.DANGEROUS, True),
    ("Risk: safe", ['"git reset --hard": discards uncommitted changes'], Level.NEEDS_CONFIRM, True),
    ("Risk: low, it only deletes the build folder", ['"rm -rf build": deletes files'], Level.NEEDS_CONFIRM, False),
])
def test_only_a_low_risk_claim_against_a_destructive_reading_is_flagged(brief: str, reasons: list[str],
                                                                        level: Level, flagged: bool) -> None:
    assert (risk_mismatch(bash("x", brief, reasons, level)) is not None) == flagged


def test_a_dangerous_call_at_60x20_keeps_its_reason_and_the_flag() -> None:
    req = bash("rm -rf ~", "Command: rm -rf ~\nRisk assessment: minimal",
               ['"rm -rf ~": recursive delete of your home folder'], Level.DANGEROUS)
    text = "\n".join(screen(req, 60, 20))
    assert "recursive delete of your home folder" in text and "Run this DANGEROUS action once?" in text
    assert "Brief says minimal risk; the policy reads: recursive" in text


def control_write() -> ApprovalRequest:
    diff = "\n".join(["--- a/.git/hooks/pre-commit", "+++ b/.git/hooks/pre-commit"] + [f"+line {i}" for i in range(80)])
    call = ToolRequest("w2", "writeFile", {"path": ".git/hooks/pre-commit"}, icerc_full_text="Intent: add a hook\n"
                       "Command: write .git/hooks/pre-commit\nRisk assessment: none")
    preview = ActionPreview("Overwrite file .git/hooks/pre-commit", diff, "diff",
                            ["the file exists and is replaced whole"], path="/ws/.git/hooks/pre-commit")
    req = ApprovalRequest(call, preview,
                          Level.NEEDS_CONFIRM, ["changes a control path: git runs it before every commit",
                                                "overwrites .git/hooks/pre-commit"], "builtin")
    req.control_note = ("This file is a control path: git runs it before every commit. Check the change below; "
                        "this is asked every time and never remembered.")
    return req


@pytest.mark.parametrize("make", [mcp, write, declared, control_write])
def test_at_60x20_every_kind_keeps_its_title_its_decisive_reason_and_the_question(make) -> None:  # noqa: ANN001
    req = make()
    rows = screen(req, 60, 20)
    text = "\n".join(rows)
    assert req.preview.title[:30] in rows[0]
    assert req.reasons[0][:40] in " ".join(text.split())
    assert rows[-1] == "› " and "Esc stop the turn" in text
    if req.grant_options:
        assert req.grant_options[0].label in text
    else:
        assert "a always" not in text  # a control path is never remembered


def test_a_control_path_overwrite_claimed_harmless_is_flagged() -> None:
    assert risk_mismatch(control_write()) == "brief says no risk; the call overwrites .git/hooks/pre-commit"
