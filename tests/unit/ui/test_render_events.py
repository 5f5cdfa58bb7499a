from __future__ import annotations

import io

from rich.console import Console

from framework_core.core.events import ToolCallFinished, ToolCallStarted, ToolOutputChunk
from framework_core.lial_core import ToolRequest, ToolResult
from framework_core.ui.render import EventRenderer, summarise_result


def bash_result(**data: object) -> ToolResult:
    return ToolResult(request_id="r1", tool_name="executeBashCommand", status="success",
                      data={"exit_code": 0, "stdout": "", "stderr": "", **data})


def test_summary_counts_lines_of_small_output() -> None:
    assert summarise_result(bash_result(stdout="a\nb\n", stderr="c\n")) == "exit 0 · 3 lines of output"
    assert summarise_result(bash_result(stdout="a\n")) == "exit 0 · 1 line of output"
    assert summarise_result(bash_result(stdout="no newline")) == "exit 0 · 1 line of output"
    assert summarise_result(bash_result()) == "exit 0 · no output"


def test_summary_of_spilled_output_names_its_size_and_file() -> None:
    result = bash_result(stdout="head…tail\n", full_output_path="/tmp/laca-stdout-x.log", output_bytes=200_000_000)
    assert summarise_result(result) == "exit 0 · 200.0 MB of output, saved in full to /tmp/laca-stdout-x.log"


def test_long_live_output_is_capped_on_screen_with_the_last_lines_at_the_end() -> None:
    buf = io.StringIO()
    renderer = EventRenderer(Console(file=buf, width=100, color_system=None), screen_lines=5)
    request = ToolRequest("r1", "executeBashCommand", {"command": "seq 1 50"})
    renderer(ToolCallStarted(request=request, title="Run command", body="seq 1 50", auto_approved=True))
    renderer(ToolOutputChunk(request_id="r1", text="".join(f"{i}\n" for i in range(1, 51))))
    stdout = "".join(f"{i}\n" for i in range(1, 51))
    renderer(ToolCallFinished(request=request, result=bash_result(stdout=stdout), duration_s=0.1))
    lines = buf.getvalue().splitlines()
    shown = [line.split("│ ")[1] for line in lines if "│ " in line]
    assert shown[:5] == ["1", "2", "3", "4", "5"]
    assert "… 45 lines not shown …" in shown and shown[-3:] == ["48", "49", "50"]
    assert lines[-1].strip().startswith("✓ exit 0 · 50 lines of output")


def test_output_without_newlines_stays_bounded_and_shows_its_start() -> None:
    buf = io.StringIO()
    renderer = EventRenderer(Console(file=buf, width=100, color_system=None), screen_lines=5)
    request = ToolRequest("r1", "executeBashCommand", {"command": "minify"})
    renderer(ToolCallStarted(request=request, title="Run command", body="minify", auto_approved=True))
    for i in range(2000):
        renderer(ToolOutputChunk(request_id="r1", text=("start" if i == 0 else "") + "x" * 1000))
    assert len(renderer._out_partial) <= 4000
    renderer(ToolOutputChunk(request_id="r1", text="\n10%\r50%\r100%"))
    renderer(ToolCallFinished(request=request, result=bash_result(stdout="..."), duration_s=0.1))
    shown = [line.split("│ ")[1] for line in buf.getvalue().splitlines() if "│ " in line]
    assert shown[0].startswith("startxxx") and shown[0].endswith("…") and len(shown[0]) == 100 - len("  │ ")
    assert shown[1] == "100%"


def test_counts_read_naturally() -> None:
    from framework_core.wording import plural

    assert [plural(0, "line"), plural(1, "line"), plural(2, "line"), plural(1234, "byte")] == \
        ["0 lines", "1 line", "2 lines", "1,234 bytes"]
    written = ToolResult("r1", "writeFile", "success", {"bytes_written": 1, "file_path": "a.txt"})
    assert summarise_result(written) == "wrote 1 byte to a.txt"


def test_a_multi_line_command_is_shown_whole_and_changes_and_sandbox_notes_are_said() -> None:
    buf = io.StringIO()
    renderer = EventRenderer(Console(file=buf, width=100, color_system=None))
    command = "cd src\nrm -rf build\nmake"
    request = ToolRequest("r1", "executeBashCommand", {"command": command})
    renderer(ToolCallStarted(request=request, title="Run command", body=command, auto_approved=True,
                             reason="session grant #1"))
    result = bash_result(changes="1 folder deleted", sandbox="the sandbox gave this command no network")
    renderer(ToolCallFinished(request=request, result=result, duration_s=0.1))
    out = buf.getvalue()
    assert "(allowed by session grant #1)" in out
    for row in command.splitlines():
        assert f"┆ {row}" in out
    assert "exit 0 · no output · 1 folder deleted" in out
    assert "⛶ sandbox: the sandbox gave this command no network" in out


def test_a_notice_with_an_address_is_not_cut_by_line_breaks_so_it_can_be_copied() -> None:
    from framework_core.core.events import Notice

    url = "http://127.0.0.1:8790/authorize?response_type=code&client_id=" + "a" * 80 + "&state=xyz"
    buf = io.StringIO()
    renderer = EventRenderer(Console(file=buf, width=60, color_system=None))
    renderer(Notice("warning", f"MCP server 'secure' needs you to sign in: open {url} in your browser"))
    renderer(Notice("info", "a plain notice " * 8))
    lines = buf.getvalue().splitlines()
    assert url in lines[0] and all(len(line) <= 60 for line in lines[1:])  # plain text still wraps by words
