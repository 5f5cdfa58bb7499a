"""The words after `/mcp__server__prompt` as the prompt's arguments; `@server:uri` told from `@path`; a server's
extra roots in the trust question and resolved against the workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framework_core.config.models import McpServerSettings
from framework_core.config.trust import file_additions
from framework_core.errors import LacaError
from framework_core.tools.mcp_resources import PromptArgument, PromptInfo, root_notes, root_paths
from framework_core.ui.mcp_commands import parse_arguments, resource_mention

GREET = PromptInfo("cases", "greet", "Greet someone",
                   (PromptArgument("name", "who", True), PromptArgument("style", "how"), PromptArgument("note")))


def test_words_fill_the_arguments_in_order_and_the_last_takes_the_rest() -> None:
    assert parse_arguments(GREET, "Ada warmly with a smile") == {"name": "Ada", "style": "warmly",
                                                                 "note": "with a smile"}
    assert parse_arguments(GREET, '"Ada Lovelace"') == {"name": "Ada Lovelace"}


def test_name_equals_value_sets_any_argument() -> None:
    assert parse_arguments(GREET, "style=warmly Ada") == {"style": "warmly", "name": "Ada"}
    assert parse_arguments(GREET, "Ada x=1") == {"name": "Ada", "style": "x=1"}  # not an argument's name


def test_a_missing_required_argument_is_named_with_the_usage() -> None:
    with pytest.raises(LacaError, match=r"needs name: /mcp__cases__greet <name> \[style\] \[note\]"):
        parse_arguments(GREET, "style=warmly")


def test_words_left_over_are_refused() -> None:
    with pytest.raises(LacaError, match="takes no arguments; 'hello' is left over"):
        parse_arguments(PromptInfo("cases", "picture"), "hello")


def test_a_resource_mention_names_a_configured_server() -> None:
    assert resource_mention("cases:mem://notes/today", ["cases"]) == ("cases", "mem://notes/today")
    assert resource_mention("src/main.py", ["cases"]) is None
    assert resource_mention("other:mem://x", ["cases"]) is None


def test_extra_roots_are_resolved_against_the_workspace_and_the_home(tmp_path: Path) -> None:
    for folder in (tmp_path / "docs", Path.home() / "notes", tmp_path / "abs"):
        folder.mkdir()
    settings = McpServerSettings(command="x", roots=["docs", "~/notes", str(tmp_path / "abs"), "docs", "gone"])
    assert root_paths(settings, tmp_path) == ((tmp_path / "docs").resolve(), (Path.home() / "notes").resolve(),
                                              (tmp_path / "abs").resolve())
    gone = (tmp_path / "gone").resolve()
    assert root_notes("fs", settings, tmp_path) == [f"MCP server 'fs': root gone is not a folder ({gone}); it is not "
                                                    "offered to the server"]


def test_the_trust_question_shows_a_servers_roots(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"files": {
        "command": "npx", "args": ["server-filesystem"], "roots": ["~/notes", "/srv/data"]}}}))
    [addition] = file_additions(tmp_path)
    assert addition.summary.endswith(' · roots: ["~/notes", "/srv/data"], with the workspace\'s access')
