"""The terminal form for an MCP server's request for input: fields, answers, decline and cancel."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from rich.console import Console

from framework_core.ui.elicit_form import Field, answer_form, fields_of, parse_value

SCHEMA = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "Name"},
    "age": {"type": "integer", "default": 30},
    "subscribe": {"type": "boolean"},
    "colour": {"type": "string", "enum": ["red", "green"]},
}}


class Params:
    message = "Tell me about you"
    requested_schema = SCHEMA


def test_fields_keep_the_servers_order_and_what_is_required() -> None:
    fields = fields_of(SCHEMA)
    assert [f.name for f in fields] == ["name", "age", "subscribe", "colour"]
    assert fields[0].required and not fields[1].required and fields[3].choices == ("red", "green")


@pytest.mark.parametrize(("field", "text", "value", "problem"), [
    (Field("n", "string", "N", True), "", None, "this field is required"),
    (Field("a", "integer", "A", False, 30), "", 30, None),
    (Field("a", "integer", "A", False), "x", None, "a integer is needed"),
    (Field("b", "boolean", "B", False), "yes", True, None),
    (Field("c", "string", "C", False, None, ("red", "green")), "2", "green", None),
    (Field("c", "string", "C", False, None, ("red", "green")), "blue", None, "choose one of: red, green"),
])
def test_values_are_parsed_and_checked(field: Field, text: str, value, problem) -> None:
    assert parse_value(field, text) == (value, problem)


def test_a_filled_form_is_accepted_with_its_values_and_a_bad_answer_is_asked_again() -> None:
    answers = iter(["", "Ada", "", "y", "9", "red"])  # name left empty first: required, asked again
    out = io.StringIO()
    result = answer_form(Params(), Console(file=out), lambda *a, **k: "y", lambda prompt: next(answers))
    assert result.action == "accept"
    assert result.content == {"name": "Ada", "age": 30, "subscribe": True, "colour": "red"}
    assert "Tell me about you" in out.getvalue() and "this field is required" in out.getvalue()


def test_n_declines_and_ctrl_c_cancels() -> None:
    assert answer_form(Params(), Console(file=io.StringIO()), lambda *a, **k: "n", input).action == "decline"

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    assert answer_form(Params(), Console(file=io.StringIO()), interrupted, input).action == "cancel"


# The choice fields of the spec's elicitation schema, as server-everything's form asks them.
CHOICES = {"type": "object", "properties": {
    "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"},
                                         {"const": "hero-2", "title": "Wonder Woman"}], "default": "hero-1"},
    "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
    "tools": {"type": "array", "minItems": 1, "maxItems": 2,
              "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]}, "default": ["Guitar"]},
    "fish": {"type": "array", "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"},
                                                  {"const": "fish-2", "title": "Salmon"}]}},
    "level": {"type": "integer", "minimum": 1, "maximum": 100},
}}


class ChoiceParams:
    message = "Pick"
    requested_schema = CHOICES


def test_titled_and_multiple_choices_are_shown_by_title_and_answered_with_their_values() -> None:
    answers = iter(["Wonder Woman", "2", "1,2,3", "piano, 3", "Tuna,2", "500", "7"])
    out = io.StringIO()
    result = answer_form(ChoiceParams(), Console(file=out, width=100), lambda *a, **k: "y",
                         lambda prompt: next(answers))
    screen = out.getvalue()
    assert (result.content, "[2] Wonder Woman" in screen, "choose at most 2" in screen, "at most 100" in screen) == (
        {"hero": "hero-2", "pet": "pet-2", "tools": ["Piano", "Drums"], "fish": ["fish-1", "fish-2"], "level": 7},
        True, True, True)


def test_a_link_to_open_is_shown_and_accepted() -> None:
    import mcp_types as types

    params = types.ElicitRequestURLParams(mode="url", url="https://example.com/sign", message="Open this",
                                          elicitation_id="e1")
    out = io.StringIO()
    result = answer_form(params, Console(file=out, width=100), lambda *a, **k: "y", input)
    assert (result.action, "It asks you to open: https://example.com/sign" in out.getvalue()) == ("accept", True)


@pytest.mark.mcp
def test_the_form_answers_a_real_servers_request(tmp_path: Path) -> None:
    from framework_core.config.models import McpServerSettings
    from framework_core.tools.base import ToolRegistry
    from framework_core.tools.mcp import McpManager
    from tests.integration.mcp_servers import CASES

    mgr = McpManager({"cases": McpServerSettings(command=sys.executable, args=[CASES])}, ToolRegistry(), tmp_path,
                     tmp_path)
    mgr.elicit = lambda params: answer_form(params, Console(file=io.StringIO()), lambda *a, **k: "y",
                                            lambda prompt: "Ada")
    mgr.start()
    try:
        assert mgr.wait_ready(60) == []
        out = mgr.call("cases", "ask", {})["content"]
    finally:
        mgr.close()
    assert out == "accept: {'name': 'Ada'}"


def test_a_url_request_shows_the_address_to_open() -> None:
    class UrlParams:
        message = "Sign in to continue"
        url = "https://example.test/authorize"

    out = io.StringIO()
    result = answer_form(UrlParams(), Console(file=out, width=100), lambda *a, **k: "n", input)
    assert (result.action, "It asks you to open: https://example.test/authorize" in out.getvalue()) == ("decline", True)
