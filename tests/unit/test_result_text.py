"""The plain text a model reads for each kind of tool result (the wire tests check it arrives as such)."""

from __future__ import annotations

from framework_core.lial_core import Message, ToolResult
from framework_core.lial_core import render_result as render


def result(status: str = "success", tool: str = "executeBashCommand", **data) -> ToolResult:
    return ToolResult("c1", tool, status, data)  # type: ignore[arg-type]


def test_a_command_is_a_header_line_then_its_output() -> None:
    text = render(result(stdout="a\nb\n", stderr="", exit_code=0, duration_s=0.031))
    assert text == "ok · exit 0 · 0.03 s\na\nb"


def test_both_streams_are_labelled_and_one_alone_is_not() -> None:
    both = render(result(stdout="out\n", stderr="err\n", exit_code=1, duration_s=0.5))
    alone = render(result(stdout="", stderr="warning: x\n", exit_code=0, duration_s=0.5))
    assert both.endswith("\nstdout:\nout\nstderr:\nerr") and alone == "ok · exit 0 · 0.50 s\nwarning: x"


def test_a_command_without_output_says_so() -> None:
    assert render(result(stdout="", stderr="", exit_code=0, duration_s=0.0)) == "ok · exit 0 · 0.00 s\n(no output)"


def test_the_header_says_what_was_cut_and_what_changed() -> None:
    text = render(result(stdout="x\n", exit_code=0, duration_s=1, cut="stdout cut: 10 of 20 lines left out",
                         changes="1 file created", sandbox="network blocked"))
    assert text.splitlines()[0] == "ok · exit 0 · 1.00 s · 1 file created · stdout cut: 10 of 20 lines left out"
    assert text.endswith("\nsandbox: network blocked")


def test_screen_only_fields_are_not_sent() -> None:
    text = render(result(stdout="x\n", exit_code=0, duration_s=1, full_output_path="/p", output_bytes=9,
                         images=[{"mime_type": "image/png", "data": "iVBOR"}]))
    assert "/p" not in text and "output_bytes" not in text and "iVBOR" not in text


def test_a_timeout_is_an_error_sentence_with_what_was_printed() -> None:
    text = render(result("error", error_message="timed out after 1 s", stdout="started\n", stderr="",
                         exit_code=None, duration_s=1.0))
    assert text == "Error: timed out after 1 s (no exit code · 1.00 s)\nstarted"


def test_refusals_are_sentences_with_the_users_reason() -> None:
    assert render(result("declined_by_user", message="User declined execution.", user_reason="not now")) == \
        "User declined execution. Their reason: not now"
    assert render(result("blocked_by_policy", message="Blocked by policy: deletes your home.", reasons=["x"])) == \
        "Blocked by policy: deletes your home."
    dry = render(result("dry_run", message="Dry run: not run.", would_run="rm x"))
    assert dry == "Dry run: not run.\nwould run: rm x"


def test_an_interrupted_call_says_it_did_not_finish() -> None:
    text = render(result("declined_by_user", message="interrupted by the user (Ctrl-C) before this call finished"))
    assert text == "Stopped: interrupted by the user (Ctrl-C) before this call finished"


def test_file_tools_read_as_what_they_did() -> None:
    write = render(ToolResult("c1", "writeFile", "success", {"file_path": "/w/a", "status": "written successfully",
                                                             "bytes_written": 3, "file_size": 3,
                                                             "message": "Wrote 3 bytes to a."}))
    read = render(result(tool="readFile", file_path="/w/a", content="one\ntwo\n", total_lines=2,
                         lines="lines 1-2 of 2"))
    empty = render(result(tool="readFile", file_path="/w/e", content="", total_lines=0, lines="empty file"))
    assert (write, read, empty) == ("ok\nWrote 3 bytes to a.", "ok · lines 1-2 of 2\none\ntwo",
                                    "ok · empty file\n(empty)")


def test_declared_api_and_mcp_results_are_their_body() -> None:
    assert render(result(tool="weather", status_code=200, body='{"t": 21}')) == 'ok · HTTP 200\n{"t": 21}'
    assert render(result(tool="mcp__s__echo", content="hello")) == "ok\nhello"


def test_other_fields_are_plain_key_value_lines() -> None:
    assert render(result(tool="x", content="c", extra={"a": 1}, note="n")) == 'ok\nc\nextra: {"a": 1}\nnote: n'


def test_the_history_keeps_the_text_and_the_images_apart() -> None:
    msg = Message.tool_result(result(tool="mcp__s__shot", content="[image 1: image/png]",
                                     images=[{"mime_type": "image/png", "data": "iVBOR"}]))
    assert msg.content == "ok\n[image 1: image/png]" and msg.images and not msg.is_error
