"""Built-in tool arguments are checked against the schema the model sees, through TEPS, before anything is
asked or run; the result names the argument, the problem and what is expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.lial_core import ICERC_FIELD, ToolRequest
from framework_core.teps import TEPSEngine
from framework_core.tools.arguments import SchemaProblem
from framework_core.tools.base import ToolSpec


def run(ws: Path, tool: str, args: dict, answers=("y",)) -> tuple[str, dict, ScriptedApprover]:
    approver = ScriptedApprover(answers)
    teps = TEPSEngine({"command_timeout_s": 10}, workspace=ws, approver=approver)
    res = teps.execute(ToolRequest("r", tool, args, "Intent: test"))
    return res.status, res.data, approver


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("readFile", {}, "Invalid arguments: `path` is required (a string)"),
    ("writeFile", {"path": "new.txt"}, "Invalid arguments: `content` is required (a string)"),
    ("executeBashCommand", {}, "Invalid arguments: `command` is required (a string)"),
    ("readFile", {"path": "a.txt", "limit": "ten"}, "Invalid arguments: `limit` must be an integer, got 'ten'"),
    ("readFile", {"path": "a.txt", "offset": 0}, "Invalid arguments: `offset` must be at least 1, got 0"),
    ("writeFile", {"path": "new.txt", "content": 5}, "Invalid arguments: `content` must be a string, got 5"),
    ("writeFile", {"path": "new.txt", "content": "x", "mode": "append"},
     "Invalid arguments: `mode` must be one of 'w', 'a', got 'append'"),
    ("executeBashCommand", {"command": ["ls", "-l"]}, "Invalid arguments: `command` must be a string, got an array"),
    ("executeBashCommand", {"command": "touch x", "timeout": 5},
     "Invalid arguments: unknown argument `timeout`; the arguments are: command, working_directory"),
    ("readFile", {"file_path": "a.txt"},
     "Invalid arguments: `path` is required (a string); "
     "unknown argument `file_path`; the arguments are: path, offset, limit, encoding, line_numbers"),
])
def test_a_call_that_does_not_fit_the_schema_is_an_error_result_and_nothing_is_asked(
        workspace: Path, tool: str, args: dict, message: str) -> None:
    status, data, approver = run(workspace, tool, args)
    assert (status, data["error_message"], approver.seen, sorted(p.name for p in workspace.iterdir())) == \
        ("error", message, [], [])


def test_a_valid_call_runs(workspace: Path) -> None:
    status, data, approver = run(workspace, "writeFile", {"path": "new.txt", "content": "hi\n", "mode": "w"})
    assert (status, (workspace / "new.txt").read_text(), len(approver.seen)) == ("success", "hi\n", 1)


def test_the_brief_sent_inside_the_arguments_is_not_an_unknown_argument(workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    req = ToolRequest.from_dict({"request_id": "r", "tool_name": "readFile", "icerc_full_text": "Intent: read",
                                 "parameters": {"path": "a.txt", ICERC_FIELD: "Intent: read"}})
    res = TEPSEngine({}, workspace=workspace).execute(req)
    assert (res.status, res.data["content"]) == ("success", "one\n")


def test_what_a_schema_cannot_say_is_still_checked_by_the_tool(workspace: Path) -> None:
    status, data, approver = run(workspace, "executeBashCommand", {"command": "  "})
    assert (status, data["error_message"], approver.seen) == (
        "error", "Invalid arguments: argument 'command' is empty", [])


def test_a_schema_that_is_not_json_schema_is_refused_by_name() -> None:
    spec = ToolSpec("odd", "d", {"type": "object", "properties": {"x": {"type": "nope"}}}, lambda a, c: {})
    with pytest.raises(SchemaProblem, match="'nope' is not valid under any of the given schemas"):
        spec.check_arguments({"x": 1})


def test_a_reference_to_another_document_is_left_to_the_tool_and_never_fetched() -> None:
    spec = ToolSpec("remote", "d", {"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:9/s.json"}}},
                    lambda a, c: {})
    assert spec.check_arguments({"x": 1}) is None
