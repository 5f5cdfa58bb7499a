"""A history too long for the model's window is cut in the request, oldest tool output first, and stays valid."""

from __future__ import annotations

from framework_core.core.context_fit import fit
from framework_core.estimate import SAFE_CHARS_PER_TOKEN, message_tokens
from framework_core.core.history import is_valid
from framework_core.lial_core import Message, ToolRequest, ToolResult

IMAGE = {"mime_type": "image/png", "data": "iVBORw0KGgo="}


def turn(n: int, output: int, args: str = "ls") -> list[Message]:
    call = ToolRequest(f"c{n}", "executeBashCommand", {"command": args}, "brief")
    result = Message.tool_result(ToolResult(f"c{n}", "executeBashCommand", "success", {"stdout": "o" * output}))
    return [Message("user", f"question {n}"), Message("assistant", "", tool_calls=[call]), result,
            Message("assistant", f"answer {n}")]


def total(messages: list[Message]) -> int:
    return sum(message_tokens(m, SAFE_CHARS_PER_TOKEN) for m in messages)  # what a cut aims at


def test_a_history_that_fits_is_sent_as_it_is() -> None:
    history = turn(1, 100) + turn(2, 100)
    assert fit(history, 10_000).messages == history


def test_the_oldest_tool_output_is_shortened_first() -> None:
    history = turn(1, 60_000) + turn(2, 60_000)
    fitted = fit(history, total(history) - 15_000)
    assert (len(fitted.messages[2].content) < 2_000, len(fitted.messages[6].content) > 60_000) == (True, True)


def test_the_cut_history_fits_the_budget() -> None:
    history = turn(1, 60_000) + turn(2, 60_000) + turn(3, 60_000)
    assert total(fit(history, 2_000).messages) <= 2_000


def test_the_cut_history_stays_valid_for_the_apis() -> None:
    history = turn(1, 60_000) + turn(2, 60_000, args="x" * 50_000) + turn(3, 60_000)
    assert is_valid(fit(history, 300).messages)


def test_the_turn_in_progress_is_never_left_out() -> None:
    history = turn(1, 60_000) + turn(2, 60_000)
    assert fit(history, 10).messages[0].content == "question 2"


def test_long_tool_arguments_are_folded_when_outputs_are_not_enough() -> None:
    history = turn(1, 10, args="x" * 90_000) + turn(2, 10)
    fitted = fit(history, total(turn(2, 10)) + 500)
    assert fitted.folded == 1 and len(fitted.messages[1].tool_calls[0].parameters["command"]) < 1_000


def test_images_of_old_results_are_left_out() -> None:
    history = turn(1, 10) + turn(2, 10)
    shot = ToolResult("c1", "mcp__s__shot", "success", {"content": "x", "images": [IMAGE] * 3})
    history[2] = Message.tool_result(shot)
    assert fit(history, total(history) - 1_000).messages[2].images == []


def test_the_session_history_itself_is_not_changed() -> None:
    history = turn(1, 60_000) + turn(2, 60_000)
    fit(history, 100)
    assert len(history[2].content) > 60_000
