"""The approval question cannot be answered by typing: an answer is a key alone on the line, then Enter."""

from __future__ import annotations

import io
import threading
import time

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from framework_core.core.approval import ApprovalRequest
from framework_core.lial_core import ToolRequest
from framework_core.policy.kinds import GrantOption
from framework_core.policy.levels import Level
from framework_core.tools.base import ActionPreview
from framework_core.ui.approval_view import check_brief, fitted_panel, question_text
from framework_core.ui.approver import TerminalApprover
from framework_core.ui.console import THEME
from framework_core.ui.keys import ChoiceLine, ask_key


def typed(line: ChoiceLine, text: str) -> str | None:
    for char in text:
        line.type(char)
    return line.enter()


def test_a_sentence_never_answers_and_a_key_inside_a_word_never_counts() -> None:
    for sentence in ("what is this?", "read: .env", "give me a", "yes please", "you", "a b", "ay"):
        assert typed(ChoiceLine("ynav"), sentence) is None, sentence
    assert typed(ChoiceLine("ynav"), "a") == "a"
    assert typed(ChoiceLine("ynav"), "yes") == "y" and typed(ChoiceLine("ynav"), "Always") == "a"
    assert typed(ChoiceLine("ynv"), "a") is None  # not on offer
    assert typed(ChoiceLine("yn", default="n"), "") == "n" and typed(ChoiceLine("yn"), "") is None


def test_enter_after_typing_only_clears_the_line_and_the_next_answer_counts() -> None:
    line = ChoiceLine("ynav")
    assert typed(line, "what is this?") is None
    assert typed(line, "n") == "n"  # a clean line again
    line.type("x")
    line.backspace()  # deleting on an empty line starts over
    assert typed(line, "y") == "y"


def ask(text: str, choices: str = "ynav", **kw: object) -> str:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(text)
        return ask_key("Allow? ", choices, guard_s=0, pt_input=pipe, pt_output=DummyOutput(), **kw)  # type: ignore[arg-type]


def test_the_prompt_ignores_a_typed_sentence_and_takes_the_key_typed_alone() -> None:
    assert ask("what is this?\ry\r") == "y"  # the 'a' in "what" saved no grant
    assert ask("read: .env\rn\r") == "n"
    assert ask("a\r") == "a"
    assert ask("\x1b", esc="esc") == "esc"  # Esc alone: stop the turn


def test_keys_within_the_guard_time_answer_nothing_and_later_keys_do() -> None:
    done = threading.Event()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("y\r")  # a stray key, at once: inside the guard

        def keep_saying_no() -> None:  # every 0.2 s until answered: the guard's time passing is what is tested
            while not done.wait(0.2):
                pipe.send_text("n\r")

        sender = threading.Thread(target=keep_saying_no, daemon=True)
        started = time.monotonic()
        sender.start()
        try:
            answer = ask_key("Allow? ", "yn", guard_s=0.6, pt_input=pipe, pt_output=DummyOutput())
        finally:
            took = time.monotonic() - started
            done.set()
            sender.join()
    assert (answer, took >= 0.6) == ("n", True)


def test_view_runs_above_the_question_which_stays_open() -> None:
    seen: list[str] = []
    assert ask("v\ry\r", actions={"v": lambda: seen.append("viewed")}) == "y"
    assert seen == ["viewed"]


def request(body: str, brief: str, *, lexer: str = "bash", title: str = "Run command", path: str | None = None,
            grants: bool = True) -> ApprovalRequest:
    req = ToolRequest("r1", "executeBashCommand", {"command": body}, icerc_full_text=brief)
    options = [GrantOption("exact_command", body, "executeBashCommand", f"exactly: {body}")] if grants else []
    return ApprovalRequest(req, ActionPreview(title, body, lexer, path=path), Level.NEEDS_CONFIRM,
                           ["writes files"], "builtin", grant_options=options)


def approve(req: ApprovalRequest, keys: str, width: int = 100, height: int = 40) -> tuple[object, str]:
    buf = io.StringIO()
    console = Console(file=buf, width=width, height=height, theme=THEME, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(keys)
        answer = TerminalApprover(console, pt_input=pipe, pt_output=DummyOutput(), guard_s=0).approve(req)
    return answer, buf.getvalue()


def test_typing_a_question_at_the_approval_saves_no_grant() -> None:
    answer, _ = approve(request("touch x", "Command: touch x"), "what is this?\rn\r\r")
    assert answer.choice == "deny" and answer.grant is None  # type: ignore[attr-defined]


def test_esc_declines_and_stops_the_turn_without_asking_why() -> None:
    answer, out = approve(request("touch x", "Command: touch x"), "\x1b")  # no reason line: the next prompt is
    assert (answer.choice, answer.stop, answer.reason) == ("deny", True, "")  # type: ignore[attr-defined]
    assert "the turn stops here" in out


def test_the_panel_leads_with_the_action_and_folds_a_brief_that_agrees() -> None:
    _, out = approve(request("touch x", "Intent: make x\nCommand: touch x\nRisk: low"), "y\r")
    assert out.index("touch x") < out.index("Brief (matches the action): make x") < out.index("Policy:")
    assert "Risk: low" not in out


def test_a_brief_naming_another_command_is_flagged() -> None:
    req = request("rm -rf build", "Intent: look around\nCommand: ls\nRisk: none")
    assert check_brief(req).state == "differs"
    _, out = approve(req, "n\r\r")
    assert "BRIEF DOES NOT MATCH THE ACTION: it says `ls`" in out
    assert check_brief(request("ls  -la", "Command: `ls -la`")).state == "agrees"
    assert check_brief(request("ls; rm -rf x", "Command: ls")).state == "differs"
    assert check_brief(request("touch x", "")).state == "missing"


def test_a_400_line_write_keeps_title_action_and_question_on_24_rows() -> None:
    diff = "\n".join(["--- a/big.py", "+++ b/big.py", "@@ -0,0 +1,400 @@"] + [f"+line {i}" for i in range(400)])
    req = request(diff, "Intent: write big.py\nCommand: write big.py", lexer="diff", title="Overwrite file big.py",
                  path="/ws/big.py")
    console = Console(file=io.StringIO(), width=80, height=24, theme=THEME, color_system=None)
    question = question_text(req, 80)
    rows = 24 - question.count("\n") - 2
    lines = console.render_lines(fitted_panel(req, console, rows), console.options, pad=False)
    text = "\n".join("".join(seg.text for seg in line) for line in lines)
    assert len(lines) <= rows
    assert "Overwrite file big.py" in text.splitlines()[0]
    assert "+line 0" in text and "more lines not shown here: v shows all of it" in text and "Policy:" in text


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_question_fits_the_width(width: int) -> None:
    req = request("npm run build", "Command: npm run build")
    req.can_preview = req.can_unsandbox = True
    long = request("npm run build -- --workspace packages/a-rather-long-package-name", "x")
    assert all(len(line) <= width for line in question_text(long, width).splitlines())
    lines = question_text(req, width).splitlines()
    assert lines[0].startswith("Allow?") and all(len(line) <= width for line in lines)
    assert "a always, this session: exactly: npm run build" in question_text(req, 120)


def test_a_folded_new_file_counts_every_line_left_out() -> None:
    from framework_core.ui.approval_view import fold_body

    body = "\n".join([f"x{i}" for i in range(60)] + ["… 341 more lines (401 in all)"])
    shown, hidden = fold_body(body, 10)
    assert shown.splitlines()[-1] == "x9" and hidden == 391
