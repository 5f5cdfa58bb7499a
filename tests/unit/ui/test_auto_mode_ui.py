"""The UI of auto mode and the network answer: `w` at the approval (typed, then Enter) gives a once-only answer
with the network, offered only when the request says so; the status line names auto mode, and says when the
sandbox is not complete enough for it."""

from __future__ import annotations

from dataclasses import replace

from framework_core.core.facade import Status
from framework_core.ui.approval_view import question_keys, question_text
from framework_core.ui.statusline import status_fragments
from tests.unit.ui.test_approval_prompt import approve, request


def test_w_answers_yes_with_network_once() -> None:
    req = request("touch x", "Command: touch x")
    req.can_network = True
    assert "w" in question_keys(req) and "w yes, with network" in question_text(req)
    answer, screen = approve(req, "w\r")
    assert (answer.choice, answer.network, answer.grant) == ("once", True, None)  # type: ignore[attr-defined]
    assert "WITH the network" in screen


def test_w_is_not_an_answer_unless_offered() -> None:
    req = request("touch x", "Command: touch x")
    assert "w" not in question_keys(req) and "network" not in question_text(req)
    answer, _ = approve(req, "w\rn\r\r")  # `w` only marks the line as typing; then n declines
    assert answer.choice == "deny" and not answer.network  # type: ignore[attr-defined]


STATUS = Status(provider="openai", model="m", persona="forge", mode="auto", dry_run=False, allow_dangerous=False,
                not_saved=False, no_api_key=False, sandbox="sandboxed", sandbox_active=True, context_percent=0.0,
                totals="0 tokens", session_id="s1")


def line(status: Status) -> str:
    return "".join(part for _, part in status_fragments(status, width=120))


def test_the_status_line_names_auto_mode_and_an_incomplete_sandbox() -> None:
    assert "auto · sandboxed" in line(STATUS)
    assert "commands ask (sandbox incomplete)" in line(replace(STATUS, auto_ready=False))
    assert "auto" not in line(replace(STATUS, mode="ask"))
