"""MCP resources, prompts and roots against the cases server (tests/integration/mcp_servers/cases_server.py):
listed at connect and again on list_changed, read within the output budget (images as images), read by the model
through `mcp__<server>__readMcpResource`, prompts as text, and the configured roots offered after the workspace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.config.models import McpServerSettings, TepsSettings
from framework_core.errors import ToolError
from framework_core.tools.base import ToolContext, ToolRegistry
from framework_core.tools.mcp import McpManager
from framework_core.tools.result_budget import saver
from tests.integration.mcp_servers import CASES, wait_for

NOTE = "Buy kiwis. The meeting moved to Thursday."


@pytest.fixture(scope="module")
def extra_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("extra-root")


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory, extra_root: Path) -> Iterator[McpManager]:
    logs, ws = tmp_path_factory.mktemp("logs"), tmp_path_factory.mktemp("ws")
    (ws / "docs").mkdir()
    settings = McpServerSettings(command=sys.executable, args=[CASES], call_timeout_s=10, permission="always",
                                 roots=[str(extra_root), "docs"])
    mgr = McpManager({"cases": settings}, ToolRegistry(), logs, ws)
    mgr.save = saver(tmp_path_factory.mktemp("session"))
    mgr.start()
    assert mgr.wait_ready(60) == [], mgr.status()
    yield mgr
    mgr.close()


def context(tmp_path: Path, budget: int = 30_000) -> ToolContext:
    return ToolContext(tmp_path, TepsSettings(output_budget_chars=budget), {})


def test_resources_templates_and_prompts_are_listed_at_connect(cases: McpManager) -> None:
    resources = {r.uri: r for r in cases.resources.resources()}
    assert {"mem://notes/today", "mem://big", "mem://picture.png"} <= set(resources)
    assert resources["mem://notes/{name}"].template and not resources["mem://notes/today"].template
    prompts = {p.name: p for p in cases.resources.prompts()}
    assert [(a.name, a.required) for a in prompts["greet"].arguments] == [("name", True), ("style", False)]
    assert prompts["greet"].command == "mcp__cases__greet"


def test_a_text_resource_is_read(cases: McpManager, tmp_path: Path) -> None:
    assert cases.resources.read("cases", "mem://notes/today", context(tmp_path)) == {"content": NOTE}
    assert cases.resources.read("cases", "mem://notes/kiwi", context(tmp_path))["content"] == "the note called kiwi"


def test_a_large_resource_is_bounded_by_the_output_budget(cases: McpManager, tmp_path: Path) -> None:
    got = cases.resources.read("cases", "mem://big", context(tmp_path, budget=4_000))
    assert len(got["content"]) <= 4_000 and "line 000000" in got["content"] and "line 019999" in got["content"]
    assert got["cut"].startswith("cut: ")


def test_an_image_resource_comes_back_as_an_image(cases: McpManager, tmp_path: Path) -> None:
    got = cases.resources.read("cases", "mem://picture.png", context(tmp_path))
    assert got["content"].startswith("[image 1: image/png") and got["images"][0]["mime_type"] == "image/png"


def test_an_unknown_resource_is_an_error_naming_the_server(cases: McpManager, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="MCP server 'cases' could not read other://x: resource not found"):
        cases.resources.read("cases", "other://x", context(tmp_path))
    with pytest.raises(ToolError, match="no MCP server named 'nope'"):
        cases.resources.read("nope", "mem://notes/today", context(tmp_path))


def test_the_model_reads_a_resource_through_the_reader_tool(cases: McpManager, tmp_path: Path) -> None:
    spec = cases.registry.get("mcp__cases__readMcpResource")
    assert spec is not None and (spec.permission, spec.server, spec.source) == ("always", "cases", "mcp:cases")
    assert spec.handler({"uri": "mem://notes/today"}, context(tmp_path)) == {"content": NOTE}
    assert "It lists: mem://notes/today (today); mem://big (big); mem://picture.png (picture)" in spec.description


def test_a_result_with_a_resource_link_names_the_reader(cases: McpManager, tmp_path: Path) -> None:
    content = cases.call("cases", "link_note", {}, context(tmp_path))["content"]
    assert content.endswith("  uri: mem://notes/today\n  type: text/plain\n"
                            "(a linked resource is read with mcp__cases__readMcpResource)")


def test_a_prompt_is_filled_and_what_is_not_text_is_named(cases: McpManager) -> None:
    greet = cases.resources.get_prompt("cases", "greet", {"name": "Ada", "style": "warmly"})
    assert (greet.text, greet.left_out) == ("Greet Ada warmly, please.", ())
    picture = cases.resources.get_prompt("cases", "picture", {})
    assert picture.text == "Describe this picture." and picture.left_out[0].startswith("message 2: image image/png")


def test_the_configured_roots_follow_the_workspace(cases: McpManager, extra_root: Path) -> None:
    roots = cases.call("cases", "roots", {})["content"].split()
    assert roots == [cases.workspace.resolve().as_uri(), extra_root.resolve().as_uri(),
                     (cases.workspace / "docs").resolve().as_uri()]


def test_a_resource_added_later_is_listed(cases: McpManager) -> None:
    cases.call("cases", "add_resource", {})
    wait_for(lambda: any(r.uri == "mem://notes/added" for r in cases.resources.resources()), 20,
             "the resource added while running")
