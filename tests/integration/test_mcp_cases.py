"""The MCP client against a server with every case (tests/integration/mcp_servers/cases_server.py): pagination,
list_changed, progress, content of every kind, errors, task-only tools, a broken schema, instructions, logs,
roots, elicitation, the environment allowlist and the one output budget."""

from __future__ import annotations

import base64
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.models import McpServerSettings, TepsSettings
from framework_core.errors import ToolError
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine
from framework_core.tools.base import ToolContext, ToolRegistry
from framework_core.tools.mcp import McpManager
from framework_core.tools.result_budget import saver
from tests.integration.mcp_servers import CASES, wait_for


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpManager]:
    """The cases server, started with a secret in LACA's environment that its config does not name."""
    logs, ws = tmp_path_factory.mktemp("logs"), tmp_path_factory.mktemp("ws")
    settings = McpServerSettings(command=sys.executable, args=[CASES], call_timeout_s=10,
                                 env={"GIVEN": "${CASES_GIVEN}", "DEFAULTED": "${CASES_UNSET:-fallback}"})
    mgr = McpManager({"cases": settings}, ToolRegistry(), logs, ws)
    mgr.environ = {**os.environ, "CASES_GIVEN": "from-laca", "OPENAI_API_KEY": "sk-not-for-servers",
                   "ANTHROPIC_API_KEY": "sk-ant-not-for-servers"}
    mgr.save = saver(tmp_path_factory.mktemp("session"))
    mgr.start()
    assert mgr.wait_ready(60) == [], mgr.status()
    yield mgr
    mgr.close()


def status(mgr: McpManager):
    return {s.name: s for s in mgr.status()}["cases"]


def context(tmp_path: Path, budget: int = 30_000) -> tuple[ToolContext, list[str]]:
    lines: list[str] = []
    return ToolContext(tmp_path, TepsSettings(output_budget_chars=budget), {}, on_output=lines.append), lines


# ---- listing -----------------------------------------------------------------------------------------
def test_every_page_of_the_listing_is_read(cases: McpManager) -> None:
    assert {"echo", "pid", "do_thing", "do.thing", "roots"} <= set(status(cases).tools)


def test_a_tool_with_a_broken_schema_is_left_out_with_a_reason(cases: McpManager) -> None:
    assert any("'bad_schema' left out" in note and "inputSchema" in note for note in status(cases).notes)


def test_a_broken_schema_does_not_take_the_server_down(cases: McpManager) -> None:
    assert status(cases).state == "ready"


def test_a_tool_whose_schema_is_not_json_schema_is_left_out_with_a_reason(cases: McpManager) -> None:
    assert [n for n in status(cases).notes if "'odd_schema'" in n] == [
        "tool 'odd_schema' left out: its inputSchema is not a valid JSON schema "
        "('nope' is not valid under any of the given schemas (at properties.x.type))"]


def test_a_task_only_tool_is_hidden(cases: McpManager) -> None:
    assert cases.registry.get("mcp__cases__task_only") is None


def test_names_that_collide_once_sanitised_stay_apart(cases: McpManager) -> None:
    names = {cases.registry.get(n).remote_name for n in [s.name for s in cases.registry.all()] if "do_thing" in n}
    assert names == {"do_thing", "do.thing", "do thing"}


def test_the_plain_name_keeps_its_plain_form(cases: McpManager) -> None:
    assert cases.registry.get("mcp__cases__do_thing").remote_name == "do_thing"


def test_list_changed_relists_and_tells_the_user(cases: McpManager) -> None:
    cases.take_notices()
    cases.call("cases", "add_tool", {})
    wait_for(lambda: cases.registry.get("mcp__cases__added") is not None, 10, "the new tool")
    assert any("changed its tools (new: added)" in text for _, text in cases.take_notices())


def test_instructions_are_offered_marked_as_the_servers(cases: McpManager) -> None:
    prompt = cases.instructions_prompt()
    assert "### From MCP server 'cases'\nCall echo to repeat text." in prompt and "not by the user" in prompt


def test_client_info_names_laca(cases: McpManager) -> None:
    conn = [s for s in cases._servers.values()][0].conn
    assert conn.session._client_info.name == "laca"


# ---- arguments, checked against the tool's schema through TEPS ---------------------------------------
@pytest.mark.parametrize(("tool", "args", "message"), [
    ("count", {}, "Invalid arguments: `n` is required (an integer)"),
    ("count", {"n": "ten"}, "Invalid arguments: `n` must be an integer, got 'ten'"),
    ("count", {"n": -1}, "Invalid arguments: `n` must be at least 0, got -1"),
    ("count", {"n": 1, "m": 2}, "Invalid arguments: unknown argument `m`; the arguments are: n"),
    ("echo", {"text": 5}, "Invalid arguments: `text` must be a string, got 5"),
])
def test_arguments_that_do_not_fit_the_schema_are_an_error_result_and_nothing_is_asked(
        cases: McpManager, tmp_path: Path, tool: str, args: dict, message: str) -> None:
    approver = ScriptedApprover(["y"])
    teps = TEPSEngine({}, registry=cases.registry, workspace=tmp_path, approver=approver)
    res = teps.execute(ToolRequest("r", f"mcp__cases__{tool}", args, "Intent: test"))
    assert (res.status, res.data.get("error_message"), approver.seen) == ("error", message, [])


@pytest.mark.parametrize(("tool", "args", "content"), [
    ("count", {"n": 3}, "count is 3"),
    ("echo", {"text": "hi", "extra": True}, "hi"),  # its schema does not forbid other arguments
])
def test_arguments_that_fit_the_schema_reach_the_server(cases: McpManager, tmp_path: Path, tool: str, args: dict,
                                                        content: str) -> None:
    approver = ScriptedApprover(["y"])
    teps = TEPSEngine({}, registry=cases.registry, workspace=tmp_path, approver=approver)
    res = teps.execute(ToolRequest("r", f"mcp__cases__{tool}", args, "Intent: test"))
    assert (res.status, res.data.get("content"), len(approver.seen)) == ("success", content, 1)


# ---- results -----------------------------------------------------------------------------------------
def test_is_error_is_a_result_for_the_model(cases: McpManager) -> None:
    with pytest.raises(ToolError, match="reported an error: the tool failed on purpose"):
        cases.call("cases", "fail", {})


def test_a_json_rpc_error_is_a_result_for_the_model(cases: McpManager) -> None:
    with pytest.raises(ToolError, match=r"failed: rpc failure on purpose \(JSON-RPC error -32000\)"):
        cases.call("cases", "rpc_error", {})


def test_a_json_rpc_error_leaves_the_server_up(cases: McpManager) -> None:
    pid = cases.call("cases", "pid", {})["content"]
    with pytest.raises(ToolError):
        cases.call("cases", "rpc_error", {})
    assert cases.call("cases", "pid", {})["content"] == pid


def test_progress_notifications_become_output_lines(cases: McpManager, tmp_path: Path) -> None:
    ctx, lines = context(tmp_path)
    cases.call("cases", "slow", {"steps": 3}, ctx)
    assert lines == ["progress 33%: step 1\n", "progress 67%: step 2\n", "progress 100%: step 3\n"]


def test_an_image_goes_to_the_provider_not_into_the_text(cases: McpManager) -> None:
    out = cases.call("cases", "image", {})
    assert (out["images"][0]["mime_type"], "iVBOR" in out["content"]) == ("image/png", False)


def test_an_image_is_named_in_the_text(cases: McpManager) -> None:
    assert "[image 1: image/png, 73 bytes]" in cases.call("cases", "image", {})["content"]


def test_an_image_is_saved_in_the_session_folder_as_sent(cases: McpManager, tmp_path: Path) -> None:
    ctx, _ = context(tmp_path)
    ctx.outputs_dir = tmp_path / "outputs"
    image = cases.call("cases", "image", {}, ctx)["images"][0]
    assert (Path(image["path"]).parent, Path(image["path"]).read_bytes()) == (
        tmp_path / "outputs", base64.b64decode(image["data"]))


def test_an_image_over_the_cap_is_a_note(cases: McpManager) -> None:
    out = cases.call("cases", "big_image", {})
    assert ("images" not in out, "not attached (over the 1.5 MB limit)" in out["content"]) == (True, True)


def test_audio_is_a_note(cases: McpManager) -> None:
    assert cases.call("cases", "audio", {})["content"].startswith("[audio audio/wav, 4.0 KB: not sent")


def test_a_resource_link_keeps_uri_name_description_and_type(cases: McpManager) -> None:
    assert cases.call("cases", "link", {})["content"] == (
        "[resource link] report.pdf (Quarterly report)\n  uri: file:///srv/report.pdf\n"
        "  description: The figures for Q3\n  type: application/pdf, 123.5 KB\n"
        "(a linked resource is read with mcp__cases__readMcpResource)")  # the server has resources


def test_embedded_resources_are_text_or_a_note(cases: McpManager) -> None:
    assert cases.call("cases", "embedded", {})["content"] == (
        "[resource mem://notes.txt (text/plain)]\nembedded notes\n"
        "[binary resource mem://blob.bin (application/octet-stream), 3.0 KB: not shown]")


def test_structured_content_alone_is_sent_as_json(cases: McpManager) -> None:
    assert cases.call("cases", "structured_only", {})["content"] == '{"answer": 42}'


def test_a_big_result_is_cut_to_the_budget_counted_once(cases: McpManager, tmp_path: Path) -> None:
    ctx, _ = context(tmp_path, budget=8_000)
    assert len(cases.call("cases", "big_text", {"lines": 50_000}, ctx)["content"]) <= 8_000


def test_a_cut_result_says_what_was_left_out_and_where_the_rest_is(cases: McpManager, tmp_path: Path) -> None:
    ctx, _ = context(tmp_path, budget=8_000)
    text = cases.call("cases", "big_text", {"lines": 50_000}, ctx)["content"]
    saved = [Path(p) for p in re.findall(r"/[^\s'\"]+", text) if Path(p).is_file()]
    assert "left out" in text and saved[0].read_text().count("\n") == 49_999


def test_a_server_budget_overrides_the_shared_one(tmp_path: Path) -> None:
    settings = McpServerSettings(command=sys.executable, args=[CASES], output_budget_chars=2_000)
    mgr = McpManager({"cases": settings}, ToolRegistry(), tmp_path, tmp_path)
    mgr.start()
    try:
        assert mgr.wait_ready(60) == []
        ctx, _ = context(tmp_path, budget=30_000)
        assert len(mgr.call("cases", "big_text", {"lines": 5_000}, ctx)["content"]) <= 2_000
    finally:
        mgr.close()


def test_a_small_context_window_makes_the_budget_smaller(cases: McpManager, tmp_path: Path) -> None:
    ctx, _ = context(tmp_path, budget=30_000)
    cases.window = lambda: 8_192
    try:
        assert len(cases.call("cases", "big_text", {"lines": 5_000}, ctx)["content"]) <= 3_276
    finally:
        cases.window = lambda: None


# ---- the server's side ---------------------------------------------------------------------------------
def test_server_logs_go_to_its_log_file(cases: McpManager) -> None:
    cases.call("cases", "echo", {"text": "logged"})
    log = status(cases).log_path
    wait_for(lambda: "[info] cases: echo called with 'logged'" in log.read_text(), 10, "the log notification")


def test_a_logged_error_is_a_notice_on_one_line_heard_at_once(cases: McpManager) -> None:
    heard: list[bool] = []
    cases.take_notices()
    cases.on_notice = lambda: heard.append(True)
    try:
        cases.call("cases", "log_error", {})
        wait_for(lambda: heard, 10, "the notice hook")
    finally:
        cases.on_notice = None
    assert cases.take_notices() == [("warning", "MCP server 'cases' logged an error: the disk is on fire "
                                                f"(see {status(cases).log_path})")]


def test_the_workspace_is_offered_as_the_root(cases: McpManager) -> None:
    assert cases.call("cases", "roots", {})["content"] == cases.workspace.resolve().as_uri()


def test_an_api_key_of_laca_never_reaches_a_server(cases: McpManager) -> None:
    names = cases.call("cases", "env_names", {})["content"].split()
    assert not [n for n in names if n.endswith("_API_KEY")]


def test_a_server_gets_the_environment_allowlist_plus_its_config(cases: McpManager) -> None:
    from framework_core.sandbox.environment import allowed

    names = set(cases.call("cases", "env_names", {})["content"].split())
    assert {"GIVEN", "DEFAULTED", "PATH", "HOME"} <= names
    assert all(allowed(n) for n in names - {"GIVEN", "DEFAULTED"}), names  # the same allowlist as a command's


def test_a_variable_named_by_the_config_is_expanded(cases: McpManager) -> None:
    assert cases.call("cases", "env", {"name": "GIVEN"})["content"] == "from-laca"


def test_a_default_is_used_for_an_unset_variable(cases: McpManager) -> None:
    assert cases.call("cases", "env", {"name": "DEFAULTED"})["content"] == "fallback"


def test_a_missing_variable_fails_the_server_with_its_name(tmp_path: Path) -> None:
    settings = McpServerSettings(command=sys.executable, args=[CASES], env={"T": "${CASES_NOT_SET_ANYWHERE}"})
    mgr = McpManager({"needy": settings}, ToolRegistry(), tmp_path, tmp_path)
    mgr.start()
    mgr.wait_ready(30)
    error = mgr.status()[0].error or ""
    mgr.close()
    assert "needs the environment variable(s) CASES_NOT_SET_ANYWHERE" in error


def test_elicitation_is_declined_when_nobody_can_answer(cases: McpManager) -> None:
    with pytest.raises(ToolError, match="Elicitation not supported"):
        cases.call("cases", "ask", {})


def test_elicitation_is_answered_on_the_main_thread(tmp_path: Path) -> None:
    import threading

    import mcp_types as types

    asked: list[tuple[str, str]] = []

    def answer(params):
        asked.append((params.message, threading.current_thread().name))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES])}, ToolRegistry(), tmp_path,
                     tmp_path)
    mgr.elicit = answer
    mgr.start()
    try:
        assert mgr.wait_ready(60) == []
        out = mgr.call("cases", "ask", {})["content"]
    finally:
        mgr.close()
    assert (out, asked) == ("accept: {'name': 'Ada'}", [("What is your name?", threading.main_thread().name)])


def test_a_server_killed_while_idle_is_restarted_in_the_background(tmp_path: Path) -> None:
    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES])}, ToolRegistry(), tmp_path,
                     tmp_path)
    mgr.start()
    try:
        assert mgr.wait_ready(60) == []
        first = int(mgr.call("cases", "pid", {})["content"])
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: mgr.status()[0].state == "restarting", 10, "the death to be noticed")
        wait_for(lambda: mgr.status()[0].state == "ready", 30, "the restart")
        assert int(mgr.call("cases", "pid", {})["content"]) != first
    finally:
        mgr.close()


def test_a_server_that_keeps_dying_is_given_up_on(tmp_path: Path) -> None:
    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES])}, ToolRegistry(), tmp_path,
                     tmp_path)
    mgr.backoff = (0.1, 0.1, 0.1)
    mgr.start()
    try:
        for death in range(1, len(mgr.backoff) + 2):  # one restart per back-off step, none after the last death
            wait_for(lambda: mgr.status()[0].state == "ready", 40, f"the server up before death {death}")
            os.kill(int(mgr.call("cases", "pid", {})["content"]), signal.SIGKILL)
            wait_for(lambda: mgr.status()[0].state != "ready", 10, f"death {death} to be noticed")
        wait_for(lambda: mgr.status()[0].state == "failed", 40, "LACA to give up")
        assert sum("gave up restarting it" in text for _, text in mgr.take_notices()) == 1
    finally:
        mgr.close()


def test_a_restart_is_said_once(tmp_path: Path) -> None:
    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES])}, ToolRegistry(), tmp_path,
                     tmp_path)
    mgr.start()
    try:
        assert mgr.wait_ready(60) == []
        os.kill(int(mgr.call("cases", "pid", {})["content"]), signal.SIGKILL)
        wait_for(lambda: mgr.status()[0].state == "restarting", 10, "the death to be noticed")
        wait_for(lambda: mgr.status()[0].state == "ready", 30, "the restart")
        said = [text for _, text in mgr.take_notices() if "'cases'" in text]
    finally:
        mgr.close()
    assert said == ["MCP server 'cases' stopped (the server's process exited) and was restarted; what it held in "
                    "memory is gone"]


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[McpManager]:
    """A cases server of the test's own (its state is the test's)."""
    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES])}, ToolRegistry(),
                     tmp_path / "logs", tmp_path)
    mgr.start()
    assert mgr.wait_ready(60) == [], mgr.status()
    yield mgr
    mgr.close()


def test_a_burst_of_logged_errors_is_said_once(fresh: McpManager) -> None:
    log, said = status(fresh).log_path, []
    for n in range(1, 4):  # each notice taken as it comes, as the REPL says it at once
        fresh.call("cases", "log_error", {})
        wait_for(lambda n=n: log.read_text().count("[error] cases:") == n, 10, f"{n} error(s) in the log")
        said += [text for _, text in fresh.take_notices() if "logged" in text]
    assert said == [f"MCP server 'cases' logged an error: the disk is on fire (see {log})"]


def test_errors_logged_while_quiet_are_counted_in_the_next_notice(fresh: McpManager) -> None:
    fresh.log_notice_every_s = 0.5
    for _ in range(3):
        fresh.call("cases", "log_error", {})
    log = status(fresh).log_path
    wait_for(lambda: log.read_text().count("[error] cases:") == 3, 10, "three errors in the log")
    fresh.take_notices()
    said = time.monotonic()
    wait_for(lambda: time.monotonic() - said > 0.5, 5, "the quiet interval")
    fresh.call("cases", "log_error", {})
    wait_for(fresh.has_notices, 10, "the next notice")
    assert fresh.take_notices() == [("warning", "MCP server 'cases' logged 3 errors since it last said one; the "
                                                f"latest: the disk is on fire (see {log})")]


# ---- progress keeps a long call alive -------------------------------------------------------------------
@pytest.fixture
def impatient(tmp_path: Path) -> Iterator[McpManager]:
    """The cases server with a 1 s call timeout."""
    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES], call_timeout_s=1)},
                     ToolRegistry(), tmp_path / "logs", tmp_path)
    mgr.start()
    assert mgr.wait_ready(60) == [], mgr.status()
    yield mgr
    mgr.close()


def test_a_call_that_keeps_reporting_progress_outlives_its_timeout(impatient: McpManager, tmp_path: Path) -> None:
    ctx, lines = context(tmp_path)
    out = impatient.call("cases", "slow", {"steps": 5, "delay": 0.5}, ctx)  # 2.5 s, never silent for 1 s
    assert (out["content"], len(lines)) == ("slow done", 5)


def test_a_call_silent_past_its_timeout_is_cancelled_though_it_reported_progress_before(
        impatient: McpManager, tmp_path: Path) -> None:
    ctx, _ = context(tmp_path)
    with pytest.raises(ToolError, match="did not answer within 1 s"):
        impatient.call("cases", "slow", {"steps": 1, "delay": 4}, ctx)  # one step, then 4 s of silence
    assert impatient.call("cases", "echo", {"text": "still up"})["content"] == "still up"
