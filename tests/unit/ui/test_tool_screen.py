"""What a tool call looks like on screen: failures as failures, blocked calls once, colours as colours."""

from __future__ import annotations

import io

from rich.console import Console

from framework_core.core.events import ToolCallFinished, ToolCallStarted, ToolOutputChunk
from framework_core.lial_core import ToolRequest, ToolResult
from framework_core.ui.console import THEME
from framework_core.ui.render import EventRenderer, output_text


def screen(color: bool = False) -> tuple[EventRenderer, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, width=100, theme=THEME, color_system="standard" if color else None,
                      force_terminal=color)
    return EventRenderer(console), buf


def test_a_failed_command_is_not_shown_as_a_success() -> None:
    renderer, buf = screen()
    request = ToolRequest("r", "executeBashCommand", {"command": "false"})
    result = ToolResult("r", "executeBashCommand", "error", {"error_message": "the command exited with status 1",
                                                             "exit_code": 1, "stdout": "", "stderr": ""})
    renderer(ToolCallFinished(request, result, 0.01))
    out = buf.getvalue()
    assert "✗ exit 1 · no output" in out and "✓" not in out


def test_a_blocked_call_says_what_and_why_once() -> None:
    renderer, buf = screen()
    request = ToolRequest("r", "executeBashCommand", {"command": "rm -rf ~"})
    result = ToolResult("r", "executeBashCommand", "blocked_by_policy", {
        "message": "Blocked by policy: x. Dangerous commands run only after the user turns on /allow-dangerous.",
        "reasons": ['"rm -rf ~": recursive delete of the home directory']})
    renderer(ToolCallFinished(request, result, 0.0))
    out = buf.getvalue()
    assert "⛔ Blocked rm -rf ~" in out and out.count("recursive delete of the home directory") == 1


def test_colours_in_output_are_colours_and_other_escapes_are_shown() -> None:
    assert output_text("\x1b[31mred\x1b[0m plain").plain == "red plain"
    assert output_text("\x1b[31mred\x1b[0m \x1b]0;title\x07").plain == "red ␛]0;title␇"
    renderer, buf = screen(color=True)
    request = ToolRequest("r", "executeBashCommand", {"command": "x"})
    renderer(ToolCallStarted(request, "Run command", "x", True, "read-only"))
    renderer(ToolOutputChunk("r", "\x1b[31mFAILED\x1b[0m test_x\n"))
    renderer(ToolCallFinished(request, ToolResult("r", "executeBashCommand", "success", {"exit_code": 0}), 0.1))
    out = buf.getvalue()
    assert "\x1b[31mFAILED" in out and "␛[31m" not in out


def test_a_dry_run_write_shows_what_it_would_write() -> None:
    renderer, buf = screen()
    request = ToolRequest("w", "writeFile", {"path": "a.txt", "content": "x"})
    renderer(ToolCallStarted(request, "Overwrite file a.txt", "--- a/a.txt\n+++ b/a.txt\n-old\n+new", True,
                             "dry run: shown, not run"))
    out = buf.getvalue()
    assert "(dry run: shown, not run)" in out and "+new" in out and "runs without asking" not in out


def test_tools_table_keeps_names_whole_and_cuts_descriptions_with_an_ellipsis() -> None:
    from framework_core.tools.base import ToolRegistry
    from framework_core.tools.builtin import builtin_tools
    from framework_core.ui.tool_view import tool_table

    registry = ToolRegistry()
    for spec in builtin_tools():
        registry.register(spec)
    for width in (60, 120):
        buf = io.StringIO()
        Console(file=buf, width=width).print(tool_table(list(registry.all())))
        rows = [line for line in buf.getvalue().splitlines() if line.strip().startswith(("executeBash", "readFile"))]
        assert rows and all("executeBashCommand " in r or "readFile " in r for r in rows)
        assert all(r.rstrip().endswith("…") for r in rows)  # a cut description says so


def test_tool_detail_shows_defaults_and_the_fields_of_nested_objects() -> None:
    from framework_core.tools.base import ToolSpec
    from framework_core.ui.tool_view import tool_detail

    schema = {"type": "object", "required": ["items"], "properties": {
        "limit": {"type": "integer", "description": "How many.", "default": 10},
        "items": {"type": "array", "items": {"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}},
        "options": {"type": "object", "properties": {"deep": {"type": "boolean", "default": False}}}}}
    spec = ToolSpec("mcp__x__put", "Put items.", schema, lambda ctx, p: {})
    buf = io.StringIO()
    Console(file=buf, width=120).print(tool_detail(spec, spec.name, [spec]))
    rows = {line.split()[0]: line for line in buf.getvalue().splitlines() if line.startswith(" ")}
    assert "How many. (default: 10)" in rows["limit"] and "array of object" in rows["items"]
    assert "yes" in rows["items[].id"] and "array of string" in rows["items[].tags"]
    assert "(default: false)" in rows["options.deep"]
