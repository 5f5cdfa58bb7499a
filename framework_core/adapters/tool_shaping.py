"""What a request offers the model of its tools, per the active profile, on any wire: for a small model the
optional parameters are left out (a 135M-parameter model fills `working_directory` with junk) and the ICERC
brief is one short line, still required; and which tool choice this request makes (`tool_choice`): a call
required on the first request of a turn, an answer right after tool results, where the profile says so.

Pure: tool schemas and the history in, tool schemas and a choice out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from framework_core.lial_core import ICERC_FIELD, Message, ToolSchema

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities

Choice = Literal["auto", "required", "answer"]
SHORT_BRIEF = "One short line for the user: what this call does and why."
SHORT_BRIEF_CHARS = 120


def shape_tools(tools: list[ToolSchema], small: bool) -> list[ToolSchema]:
    """The schemas as sent: unchanged, or for a small model without optional parameters and with a short brief."""
    if not small:
        return tools
    out = []
    for tool in tools:
        params = dict(tool.parameters)
        required = list(params.get("required") or [])
        props = {k: v for k, v in (params.get("properties") or {}).items() if k in required}
        if ICERC_FIELD in props:
            props[ICERC_FIELD] = {"type": "string", "description": SHORT_BRIEF, "maxLength": SHORT_BRIEF_CHARS}
        params.update(properties=props, required=[r for r in required if r in props])
        out.append(ToolSchema(tool.name, tool.description.split(". ")[0].rstrip(".") + ".", params))
    return out


def choice_for(messages: list[Message], caps: "Capabilities") -> Choice:
    """This request's tool choice: after tool results, or as a turn's first request, as the profile says."""
    last = messages[-1] if messages else None
    if last is not None and last.role == "tool_result":
        return "answer" if caps.tool_choice_after_result == "answer" else "auto"
    if last is not None and last.role == "user":
        return "required" if caps.tool_choice_first == "required" else "auto"
    return "auto"


def native_choice(choice: Choice) -> str | None:
    """Chat Completions' `tool_choice` for a choice (None: send none, the API's default is auto)."""
    return {"required": "required", "answer": "none"}.get(choice)
