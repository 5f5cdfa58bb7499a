"""The official npm reference servers (server-everything, server-filesystem), where node and the packages are
on this machine already: nothing is downloaded by the tests (npx --offline); otherwise they are skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.config.models import McpServerSettings, TepsSettings
from framework_core.tools.base import ToolContext, ToolRegistry
from framework_core.tools.mcp import McpManager
from tests.integration.mcp_servers.cases_server import png

EVERYTHING = "@modelcontextprotocol/server-everything"
FILESYSTEM = "@modelcontextprotocol/server-filesystem"
# Read now, before the tests' private HOME replaces the user's: the npm cache the packages are in.
NPM_CACHE = os.environ.get("npm_config_cache") or str(Path.home() / ".npm")


def offline(package: str) -> str | None:
    """Why `package` cannot run from the local npm cache, or None when it can."""
    if shutil.which("npx") is None or shutil.which("node") is None:
        return "node and npx are not installed"
    probe = subprocess.run(["npx", "--offline", "-y", "-p", package, "node", "-e", "0"], capture_output=True,
                           env={**os.environ, "npm_config_cache": NPM_CACHE}, timeout=120, stdin=subprocess.DEVNULL)
    return None if probe.returncode == 0 else f"{package} is not in the npm cache ({NPM_CACHE}); fetch it once with " \
                                              f"`npx -y -p {package} node -e 0` to run these tests"


def npx(package: str, *args: str, **settings) -> McpServerSettings:
    return McpServerSettings(command="npx", args=["--offline", "-y", package, *args],
                             env={"npm_config_cache": NPM_CACHE}, **settings)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpManager, Path]]:
    for package in (EVERYTHING, FILESYSTEM):
        why = offline(package)
        if why:
            pytest.skip(why)
    ws = tmp_path_factory.mktemp("ws").resolve()
    (ws / "big.txt").write_text("".join(f"line {i:07d} " + "w" * 60 + "\n" for i in range(30_000)))  # 2.2 MB
    (ws / "pic.png").write_bytes(png(4, 4))
    servers = {"everything": npx(EVERYTHING, call_timeout_s=30), "fs": npx(FILESYSTEM, str(ws))}
    mgr = McpManager(servers, ToolRegistry(), tmp_path_factory.mktemp("logs"), ws)
    mgr.environ = {**os.environ, "OPENAI_API_KEY": "sk-not-for-servers"}
    mgr.start()
    assert mgr.wait_ready(90) == [], mgr.status()
    yield mgr, ws
    mgr.close()


def ctx(tmp: Path, lines: list[str] | None = None) -> ToolContext:
    out = lines if lines is not None else []
    return ToolContext(tmp, TepsSettings(output_budget_chars=10_000), {}, on_output=out.append)


def test_everything_lists_all_its_tools(reference) -> None:
    mgr, _ = reference
    tools = {s.name: s.tools for s in mgr.status()}["everything"]
    assert {"echo", "get-sum", "get-tiny-image", "get-resource-links", "trigger-long-running-operation"} <= set(tools)


def test_everything_task_only_tool_is_hidden(reference) -> None:
    mgr, _ = reference
    notes = {s.name: s.notes for s in mgr.status()}["everything"]
    assert all("runs only as a task" in n for n in notes)


def test_everything_instructions_are_offered(reference) -> None:
    mgr, _ = reference
    assert "### From MCP server 'everything'" in mgr.instructions_prompt()


def test_everything_get_env_shows_no_key_of_laca(reference) -> None:
    mgr, _ = reference
    assert "sk-not-for-servers" not in mgr.call("everything", "get-env", {})["content"]


def test_everything_tiny_image_is_an_image(reference) -> None:
    mgr, _ = reference
    assert mgr.call("everything", "get-tiny-image", {})["images"][0]["mime_type"] == "image/png"


def test_everything_resource_links_keep_their_uris(reference) -> None:
    mgr, _ = reference
    assert "  uri: " in mgr.call("everything", "get-resource-links", {"count": 2})["content"]


def test_everything_resources_and_prompts_are_listed_read_and_filled(reference, tmp_path: Path) -> None:
    mgr, _ = reference
    uris = {r.uri for r in mgr.resources.resources() if r.server == "everything"}
    assert "demo://resource/static/document/architecture.md" in uris
    got = mgr.resources.read("everything", "demo://resource/dynamic/text/7", ctx(tmp_path))
    assert got["content"].startswith("Resource 7: This is a plaintext resource")
    prompt = mgr.resources.get_prompt("everything", "args-prompt", {"city": "Paris", "state": "Texas"})
    assert prompt.text == "What's weather in Paris, Texas?"


def test_everything_long_operation_reports_progress(reference, tmp_path: Path) -> None:
    mgr, _ = reference
    lines: list[str] = []
    mgr.call("everything", "trigger-long-running-operation", {"duration": 1, "steps": 3}, ctx(tmp_path, lines))
    assert [line.split(":")[0].strip() for line in lines] == ["progress 33%", "progress 67%", "progress 100%"]


def test_filesystem_big_file_is_cut_to_the_budget(reference, tmp_path: Path) -> None:
    mgr, ws = reference
    out = mgr.call("fs", "read_text_file", {"path": str(ws / "big.txt")}, ctx(tmp_path))["content"]
    assert len(out) <= 10_000 and "left out" in out


def test_filesystem_media_file_is_an_image_not_base64_text(reference, tmp_path: Path) -> None:
    mgr, ws = reference
    out = mgr.call("fs", "read_media_file", {"path": str(ws / "pic.png")}, ctx(tmp_path))
    assert (len(out.get("images", [])), "iVBOR" in out["content"]) == (1, False)


@dataclass
class Asking:
    mgr: McpManager
    lines: list[str]  # what the user types at the form's questions, in order
    key: str = "y"  # the answer to "Answer it?"


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Asking]:
    """server-everything with LACA's terminal form answering its requests for input from scripted lines."""
    import io

    from rich.console import Console

    from framework_core.ui.elicit_form import answer_form

    why = offline(EVERYTHING)
    if why:
        pytest.skip(why)
    ws = tmp_path_factory.mktemp("ws").resolve()
    mgr = McpManager({"everything": npx(EVERYTHING, call_timeout_s=30)}, ToolRegistry(),
                     tmp_path_factory.mktemp("logs"), ws)
    rig = Asking(mgr, [])
    mgr.elicit = lambda params: answer_form(params, Console(file=io.StringIO()), lambda *a, **k: rig.key,
                                            lambda prompt: rig.lines.pop(0) if rig.lines else "")
    mgr.start()
    assert mgr.wait_ready(90) == [], mgr.status()
    yield rig
    mgr.close()


def test_everything_url_elicitation_is_asked_and_completed(asking: Asking) -> None:
    asking.key = "y"
    out = asking.mgr.call("everything", "trigger-url-elicitation",
                          {"url": "https://example.com/sign", "message": "Sign"})
    assert "User completed the URL elicitation flow" in out["content"]


def test_everything_form_takes_titled_and_several_choices(asking: Asking) -> None:
    asking.key = "y"
    asking.lines[:] = ["Ada"] + [""] * 8 + ["Piano,Drums", "Wonder Woman", "Salmon, Trout", "Dogs"]
    raw = asking.mgr.call("everything", "trigger-elicitation-request", {})["content"].split("Raw result:", 1)[1]
    content = json.loads(raw)["content"]
    assert [content[k] for k in ("untitledMultipleSelectEnum", "titledSingleSelectEnum", "titledMultipleSelectEnum",
                                 "legacyTitledEnum")] == [["Piano", "Drums"], "hero-3", ["fish-2", "fish-3"], "pet-2"]


def test_everything_link_required_first_is_asked_and_the_call_goes_again(asking: Asking) -> None:
    """JSON-RPC -32042: the server wants a link opened before the call; once the user has, the call is repeated."""
    asking.key = "y"
    out = asking.mgr.call("everything", "trigger-url-elicitation",
                          {"url": "https://example.com/first", "message": "Sign", "errorPath": True})
    assert "User completed the URL elicitation flow" in out["content"]


def test_everything_link_required_and_declined_is_named_to_the_model(asking: Asking) -> None:
    from framework_core.errors import ToolError

    asking.key = "n"
    with pytest.raises(ToolError) as err:
        asking.mgr.call("everything", "trigger-url-elicitation",
                        {"url": "https://example.com/second", "message": "Sign", "errorPath": True})
    assert "needs the user to open https://modelcontextprotocol.io" in str(err.value)
