"""Tool arguments, checked once against the JSON schema the model sees, before anything is asked or run.

Built-in, declared and MCP tools all pass through `check` (TEPS calls it through `ToolSpec.check_arguments`);
the validator is compiled once per tool spec. A failure is a `ToolArgumentError` whose text names the
argument, what was wrong and what is expected, e.g. "`path` is required (a string)" or "`limit` must be an
integer, got 'ten'". What a schema cannot say (a path outside the workspace, an empty command) stays with
the tool.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from framework_core.errors import ToolArgumentError
from framework_core.lial_core import ICERC_FIELD

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

MAX_PROBLEMS = 5  # said at once; the model fixes them and sends the call again
_TYPES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
          "object": "an object", "array": "an array", "null": "null"}
_ORDER = {"required": 0, "additionalProperties": 1}
_BOUNDS = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
           "exclusiveMaximum": "less than"}


class SchemaProblem(ValueError):
    """A tool's input schema is not a valid JSON schema (the message says where and why)."""


def compile_schema(schema: dict[str, Any]) -> "Validator":
    """A validator for `schema` (its `$schema` draft, else 2020-12); `$ref`s resolve only inside it."""
    from jsonschema import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for
    from referencing import Registry

    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = _dotted(exc.absolute_path)
        raise SchemaProblem(f"{exc.message}" + (f" (at {where})" if where else "")) from None
    return cls(schema, registry=Registry())


def check(validator: "Validator", args: dict[str, Any]) -> None:
    """Raise ToolArgumentError naming every problem (up to MAX_PROBLEMS) of `args` against the schema."""
    from referencing.exceptions import Unresolvable

    try:  # missing arguments first, then unknown ones, then wrong values, in the schema's order
        errors = sorted(validator.iter_errors(args), key=lambda e: _ORDER.get(str(e.validator), len(_ORDER)))
    except Unresolvable:  # a `$ref` to another document: the tool's server checks its own arguments
        return
    problems = list(dict.fromkeys(describe(e) for e in errors))
    if problems:
        more = len(problems) - MAX_PROBLEMS
        raise ToolArgumentError("; ".join(problems[:MAX_PROBLEMS]) + (f"; and {more} more" if more > 0 else ""))


def describe(err: "ValidationError") -> str:
    """One problem in words: the argument, what was wrong, what is expected."""
    where, kind, want, value = _dotted(err.absolute_path), err.validator, err.validator_value, err.instance
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    if kind == "required" and isinstance(value, dict) and isinstance(want, list):
        missing = next((p for p in want if p not in value), "?")
        expected = _expected(((schema.get("properties") or {}).get(missing)) or {})
        return f"`{_join(where, missing)}` is required" + (f" ({expected})" if expected else "")
    if kind == "additionalProperties" and want is False and isinstance(value, dict):
        return _unknown(where, value, schema)
    if kind == "type":
        return f"`{where or 'the arguments'}` must be {_expected({'type': want})}, got {shown(value)}"
    if kind == "enum" and isinstance(want, list):
        return f"`{where}` must be one of {', '.join(shown(v) for v in want)}, got {shown(value)}"
    if kind in _BOUNDS:
        return f"`{where}` must be {_BOUNDS[str(kind)]} {want}, got {shown(value)}"
    if kind in ("minLength", "maxLength") and isinstance(value, str):
        most = "at least" if kind == "minLength" else "at most"
        return f"`{where}` must be {most} {want} characters long, got {len(value):,}"
    if kind == "const":
        return f"`{where}` must be {shown(want)}, got {shown(value)}"
    return f"`{where}`: {err.message}" if where else err.message


def _unknown(where: str, value: dict[str, Any], schema: Mapping[str, Any]) -> str:
    props = schema.get("properties") or {}
    patterns = list((schema.get("patternProperties") or {}))
    extra = [k for k in value if k not in props and not any(re.search(p, k) for p in patterns)]
    known = [k for k in props if k != ICERC_FIELD]
    names = ", ".join(f"`{_join(where, k)}`" for k in extra)
    expected = f"; the arguments are: {', '.join(known)}" if known else "; it takes no arguments"
    return f"unknown argument{'s' if len(extra) > 1 else ''} {names}{expected}"


def _expected(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if "enum" in prop:
        return "one of " + ", ".join(shown(v) for v in prop["enum"])
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    return " or ".join(_TYPES.get(k, k) for k in kinds)


def shown(value: Any, limit: int = 60) -> str:
    """A value as the model wrote it, short: strings quoted, containers named."""
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else text[: limit - 2] + "…'"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value)


def _dotted(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
