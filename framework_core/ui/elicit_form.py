"""An MCP server's request for input (elicitation), answered in the terminal: the server's message, then one
question per field of its form, or a link to open. The user may decline (n) or cancel (Esc, Ctrl-C).

The fields are the spec's flat ones: strings, numbers (with their minimum and maximum), booleans, and choices:
one of a list (`enum`, titled by `oneOf` const/title or the older `enumNames`) or several of one (an array whose
`items` have an `enum` or `anyOf` const/title, within `minItems`/`maxItems`). A choice is shown by its title and
answered by its number, its value or its title; the server gets the value."""

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
    kind: str  # string | number | integer | boolean | array (several choices)
    title: str
    required: bool
    default: Any = None
    choices: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()  # the choices' titles, where the server gave them (else the values are shown)
    minimum: float | None = None  # of a number, or of how many choices an array takes
    maximum: float | None = None

    @property
    def multi(self) -> bool:
        return self.kind == "array"


def _options(prop: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """(values, titles) of a choice field; titles empty when the server gave none."""
    titled = [o for o in prop.get("oneOf") or prop.get("anyOf") or [] if isinstance(o, dict) and "const" in o]
    if titled:
        return [o["const"] for o in titled], [str(o.get("title") or o["const"]) for o in titled]
    values = list(prop.get("enum") or [])
    names = prop.get("enumNames")
    return values, [str(n) for n in names] if isinstance(names, list) and len(names) == len(values) else []


def fields_of(schema: dict[str, Any]) -> list[Field]:
    """The form's fields, in the order the server gave them (the spec allows flat fields only)."""
    required = set(schema.get("required") or [])
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = str(prop.get("type") or "string")
        items: dict[str, Any] = prop["items"] if isinstance(prop.get("items"), dict) else {}
        values, labels = _options(items if kind == "array" else prop)
        title = prop.get("title") or name
        if prop.get("description"):
            title += f" ({prop['description']})"
        low, high = ("minItems", "maxItems") if kind == "array" else ("minimum", "maximum")
        out.append(Field(name, kind, title, name in required, prop.get("default"),
                         tuple(str(c) for c in values if c is not None), tuple(labels),
                         prop.get(low), prop.get(high)))
    return out


def _choice(field: Field, text: str) -> str | None:
    """The value an answer names: its number, the value itself or its title."""
    if text.isdigit() and 1 <= int(text) <= len(field.choices):
        return field.choices[int(text) - 1]
    if text in field.choices:
        return text
    for names in (field.labels, field.choices):
        folded = [name.casefold() for name in names]
        if text.casefold() in folded:
            return field.choices[folded.index(text.casefold())]
    return None


def _shown(field: Field, values: Any) -> str:
    """A default as the user reads it: titles for choices, several joined by commas."""
    items = values if isinstance(values, list) else [values]
    if field.labels:
        items = [field.labels[field.choices.index(str(v))] if str(v) in field.choices else v for v in items]
    return ", ".join(str(v) for v in items)


def _several(field: Field, text: str) -> tuple[Any, str | None]:
    picked: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        value = _choice(field, part) if part else None
        if value is None:
            return None, "choose from: " + ", ".join(field.labels or field.choices) + " (several: 1,3)"
        if value not in picked:
            picked.append(value)
    return _count_ok(field, picked)


def _count_ok(field: Field, picked: list[str]) -> tuple[Any, str | None]:
    if field.minimum is not None and len(picked) < field.minimum:
        return None, f"choose at least {field.minimum:g}"
    if field.maximum is not None and len(picked) > field.maximum:
        return None, f"choose at most {field.maximum:g}"
    return picked, None


def _number(field: Field, text: str) -> tuple[Any, str | None]:
    try:
        value: float = int(text) if field.kind == "integer" else float(text)
    except ValueError:
        return None, f"a {field.kind} is needed"
    if field.minimum is not None and value < field.minimum:
        return None, f"at least {field.minimum:g}"
    if field.maximum is not None and value > field.maximum:
        return None, f"at most {field.maximum:g}"
    return value, None


def parse_value(field: Field, text: str) -> tuple[Any, str | None]:
    """(value, problem). An empty answer gives the default (None when there is none)."""
    text = text.strip()
    if not text:
        if field.default is not None or not field.required:
            return field.default, None
        return None, "this field is required"
    if field.multi:
        return _several(field, text)
    if field.choices:
        value = _choice(field, text)
        if value is not None:
            return value, None
        return None, "choose one of: " + ", ".join(field.labels or field.choices)
    if field.kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True, None
        return (False, None) if text.lower() in ("n", "no", "false", "0") else (None, "answer yes or no")
    if field.kind in ("number", "integer"):
        return _number(field, text)
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
    for n, choice in enumerate(field.labels or field.choices, start=1):
        console.print(Text(f"  [{n}] {visible(choice)}"))
    if field.multi:
        console.print(Text("  several: their numbers with commas, e.g. 1,3", style="dim"))
    hint = f" [{visible(_shown(field, field.default))}]" if field.default is not None else (
        "" if field.required else " (optional)")
    while True:
        value, problem = parse_value(field, ask_line(f"{visible(field.title)}{hint}: "))
        if problem is None:
            return value
        console.print(Text(problem, style="laca.warn"))
