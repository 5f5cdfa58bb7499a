"""An MCP server's request for input (elicitation), answered in the terminal: the server's message, then one
question per field of its form, or a link to open. The user may decline (n) or cancel (Esc, Ctrl-C)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from framework_core.ui.safe_text import visible


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # string | number | integer | boolean
    title: str
    required: bool
    default: Any = None
    choices: tuple[str, ...] = ()


def fields_of(schema: dict[str, Any]) -> list[Field]:
    """The form's fields, in the order the server gave them (the spec allows flat primitive fields only)."""
    required = set(schema.get("required") or [])
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        choices = prop.get("enum") or [o.get("const") for o in prop.get("oneOf") or [] if isinstance(o, dict)]
        title = prop.get("title") or name
        if prop.get("description"):
            title += f" ({prop['description']})"
        out.append(Field(name, str(prop.get("type") or "string"), title, name in required, prop.get("default"),
                         tuple(str(c) for c in choices if c is not None)))
    return out


def parse_value(field: Field, text: str) -> tuple[Any, str | None]:
    """(value, problem). An empty answer gives the default (None when there is none)."""
    text = text.strip()
    if not text:
        if field.default is not None or not field.required:
            return field.default, None
        return None, "this field is required"
    if field.choices:
        if text.isdigit() and 1 <= int(text) <= len(field.choices):
            return field.choices[int(text) - 1], None
        return (text, None) if text in field.choices else (None, "choose one of: " + ", ".join(field.choices))
    if field.kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True, None
        return (False, None) if text.lower() in ("n", "no", "false", "0") else (None, "answer yes or no")
    if field.kind in ("number", "integer"):
        try:
            return (int(text) if field.kind == "integer" else float(text)), None
        except ValueError:
            return None, f"a {field.kind} is needed"
    return text, None


def answer_form(params: Any, console: Console, ask_key: Callable[..., str], ask_line: Callable[[str], str]) -> Any:
    """An ElicitResult for `params` (form or URL mode), asking in the terminal."""
    import mcp_types as types

    url = getattr(params, "url", None)
    body = [Text(visible(str(getattr(params, "message", "") or "")))]
    if url:
        body += [Text(""), Text(f"It asks you to open: {visible(str(url))}", style="bold")]
    console.print(Panel(Group(*body), title="[bold]An MCP server asks for your input[/bold]", title_align="left",
                        border_style="cyan"))
    try:
        key = ask_key("Answer it? y · n declines · Esc cancels ", "yn")
    except (KeyboardInterrupt, EOFError):
        return types.ElicitResult(action="cancel")
    if key != "y":
        return types.ElicitResult(action="decline")
    if url:
        return types.ElicitResult(action="accept")  # the user opened the link themselves
    content: dict[str, Any] = {}
    try:
        for field in fields_of(getattr(params, "requested_schema", None) or {}):
            content_value = _ask_field(field, console, ask_line)
            if content_value is not None:
                content[field.name] = content_value
    except (KeyboardInterrupt, EOFError):
        return types.ElicitResult(action="cancel")
    return types.ElicitResult(action="accept", content=content)


def _ask_field(field: Field, console: Console, ask_line: Callable[[str], str]) -> Any:
    if field.choices:
        for n, choice in enumerate(field.choices, start=1):
            console.print(Text(f"  [{n}] {visible(choice)}"))
    hint = f" [{field.default}]" if field.default is not None else ("" if field.required else " (optional)")
    while True:
        value, problem = parse_value(field, ask_line(f"{visible(field.title)}{hint}: "))
        if problem is None:
            return value
        console.print(Text(problem, style="laca.warn"))
