"""One translator from YAML, JSON and pydantic errors to a ConfigError naming the file, the line and the key.

Every loader of a start-up file (config layers, rule files, tools files, `.mcp.json`) ends here, so every
such error reads the same way: `path, line N (key 'a.b[0].c'): what is wrong; what is expected (got …)`.
Lines come from the composed YAML nodes, or for JSON from the decoder (`yaml_load.YamlDoc.line_of`).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Annotated, Any, Sequence, Union, get_args, get_origin

from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from framework_core.config.yaml_load import YamlDoc

Keys = Sequence["str | int"]


def yaml_syntax(path: "Path", exc: Exception, text: str | None = None) -> ConfigError:
    """A YAML parser or constructor error, at the line of its mark (`text`: the document, to tell an error at
    its end, where the line that opened what was left open is the one to name)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context_mark", None)
    index = getattr(mark, "index", None)
    if context is not None and text is not None and isinstance(index, int) and index >= len(text.rstrip()):
        # the file ended inside something left open: the line that opened it is the one to fix
        return ConfigError(f"invalid YAML: {problem} before the file ended. Close what this line opens.",
                           path=str(path), line=context.line + 1)
    line = mark.line + 1 if mark is not None else None
    return ConfigError(f"invalid YAML: {problem}. Fix the syntax on that line.", path=str(path), line=line)


def json_syntax(path: "Path", msg: str, line: int) -> ConfigError:
    """A JSON decoder error, at the line the decoder names."""
    return ConfigError(f"invalid JSON: {msg}. Fix the syntax on that line.", path=str(path), line=line)


def key_path(keys: Keys) -> str:
    """`('rules', 2, 'action')` as `rules[2].action`; an entry of a top-level list as `[0].name`."""
    out = ""
    for part in keys:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def at_key(message: str, doc: "YamlDoc", keys: Keys, *, context: str = "") -> ConfigError:
    """A loader's own finding about the value at `keys` (a wrong shape, a failed example)."""
    return ConfigError(context + message, path=str(doc.path), line=doc.line_of(tuple(keys)),
                       key=key_path(keys) or None)


def pydantic_error(exc: Any, doc: "YamlDoc", *, at: Keys = (), context: str = "", model: Any = None) -> ConfigError:
    """The first error of a pydantic ValidationError for data read from `doc`, validated at key path `at`;
    `model` (the validated class) lets an unknown key be answered with the keys that are allowed."""
    err = exc.errors()[0]
    return at_key(explain(err, model), doc, (*at, *err["loc"]), context=context)


def explain(err: dict[str, Any], model: Any = None) -> str:
    """Pydantic's message, made to name the real problem, what is expected and the value that caused it."""
    loc = tuple(err.get("loc", ()))
    kind = err.get("type")
    if kind == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1]) if model is not None else []
        expected = f"; expected one of: {', '.join(allowed)}" if allowed else ""
        return f"unknown key '{loc[-1] if loc else '?'}'{expected} (check the spelling and the indentation)"
    if kind == "missing":
        return f"'{loc[-1] if loc else '?'}' is required here and missing"
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    value = err.get("input")
    if "input" in err and not (kind == "value_error" and isinstance(value, (dict, list))):  # a whole entry
        shown = repr(value) if isinstance(value, (str, int, float, bool)) or value is None else type_name(value)
        msg += f" (got {shown[:80]})"
    return msg


def type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", int: "a number", float: "a number",
             bool: "true/false", type(None): "nothing (null)"}
    return names.get(type(value), type(value).__name__)


def _fields_at(model: Any, loc: tuple[Any, ...]) -> list[str]:
    """The keys the pydantic model nested at `loc` inside `model` accepts (empty when it cannot tell)."""
    ann = model
    for part in loc:
        ann = _unwrap(ann)
        if _is_model(ann):
            field = ann.model_fields.get(str(part))
            if field is None:
                return []
            ann = field.annotation
        elif get_origin(ann) in (list, tuple, set, dict):
            args = get_args(ann)
            ann = args[-1] if args else None
        else:
            return []
    ann = _unwrap(ann)
    return [f.alias or name for name, f in ann.model_fields.items()] if _is_model(ann) else []


def _unwrap(ann: Any) -> Any:
    """`Optional[X]`, `X | None` and `Annotated[X, …]` as X (the first member that is not None)."""
    while get_origin(ann) in (Union, types.UnionType, Annotated):
        ann = next((a for a in get_args(ann) if a is not type(None)), None)
    return ann


def _is_model(ann: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(ann, type) and issubclass(ann, BaseModel)
