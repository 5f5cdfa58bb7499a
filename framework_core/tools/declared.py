"""Declared tools: an allow-list in tools.yaml of CLI and HTTP tools with typed parameters.

CLI tools run an argv list with shell=False; parameters fill whole argv slots. API tools call HTTP endpoints;
their credentials come from env vars named in the file and never reach the model, the screen or a result.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools.base import ActionPreview, ToolContext, ToolSpec
from framework_core.tools.files import resolve_in_workspace

PLACEHOLDER = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
RESERVED = {"executeBashCommand", "readFile", "writeFile", "editFile", "applyPatch"}


class ParamModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    type: Literal["string", "integer", "number", "boolean", "enum", "filepath", "url"] = "string"
    required: bool = True
    description: str = ""
    values: list[str] = Field(default_factory=list, description="Allowed values for an enum.")
    max_length: int = Field(4096, gt=0)
    minimum: float | None = None
    maximum: float | None = None
    allowed_hosts: list[str] = Field(default_factory=list)
    must_exist: bool = True
    flag: str | None = Field(None, description="Put this flag before the value, e.g. '--limit'.")

    @model_validator(mode="after")
    def _check(self) -> "ParamModel":
        if self.type == "enum" and not self.values:
            raise ValueError("an enum parameter needs 'values'")
        if self.type == "url" and not self.allowed_hosts:
            raise ValueError("a url parameter needs 'allowed_hosts'")
        return self


class ToolConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: list[str] | None = None
    base_url: str | None = None
    method: Literal["GET", "POST"] = "GET"
    api_key_env: str | None = None
    api_key_header: str = "Authorization"
    api_key_prefix: str = "Bearer "
    timeout_s: float = Field(30.0, gt=0)
    params: list[ParamModel] = Field(default_factory=list)


class DeclaredToolModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str
    type: Literal["cli", "api"]
    handler: str | None = None
    requires_approval: bool = True
    network: bool = False  # a CLI tool that needs the network gets it in the sandbox (once approved)
    config: ToolConfigModel

    @model_validator(mode="after")
    def _check(self) -> "DeclaredToolModel":
        if not NAME.match(self.name):
            raise ValueError("name must be letters, digits, '_' or '-', starting with a letter (max 64)")
        if self.name in RESERVED:
            raise ValueError(f"'{self.name}' is a built-in tool name")
        if self.type == "cli" and not self.config.command:
            raise ValueError("a cli tool needs config.command (a list: program and arguments)")
        if self.type == "api" and not self.config.base_url:
            raise ValueError("an api tool needs config.base_url")
        names = [p.name for p in self.config.params]
        if len(names) != len(set(names)):
            raise ValueError("parameter names must be unique")
        for part in self.config.command or []:
            m = PLACEHOLDER.match(part)
            if m and m.group(1) not in names:
                raise ValueError(f"config.command uses {{{m.group(1)}}} but no such parameter is declared")
            if "{" in part and not m and re.search(r"\{[A-Za-z_]", part):
                raise ValueError(f"placeholder in '{part}' must be a whole argument like '{{name}}'")
        return self


# ---- parameter validation ----------------------------------------------------------------------------
# The schema carries types, required and unknown parameters, enums, bounds and lengths; TEPS checks every
# call against it (tools/arguments.py). `argv_value` keeps what a schema cannot say: workspace paths, hosts,
# NUL bytes, option-like strings.

def json_schema(params: list[ParamModel]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for p in params:
        kind = {"integer": "integer", "number": "number", "boolean": "boolean"}.get(p.type, "string")
        prop: dict[str, Any] = {"type": kind, "description": p.description or p.type}
        if kind == "string":
            prop["maxLength"] = p.max_length
        if kind in ("integer", "number"):
            bounds = (("minimum", p.minimum), ("maximum", p.maximum))
            prop.update({k: int(v) if v == int(v) else v for k, v in bounds if v is not None})
        if p.type == "enum":
            prop["enum"] = list(p.values)
        if p.type == "filepath":
            prop["description"] += " (a path relative to the workspace)"
        if p.type == "url":
            prop["description"] += f" (http(s) URL on: {', '.join(p.allowed_hosts)})"
        props[p.name] = prop
    return {"type": "object", "properties": props, "required": [p.name for p in params if p.required],
            "additionalProperties": False}


def argv_value(p: ParamModel, value: Any, workspace: Path) -> str:
    """A value that fits the schema as one argv string, or a ToolArgumentError for what the schema cannot say."""
    if p.type == "boolean":
        return "true" if value else "false"
    if p.type in ("integer", "number"):
        return str(int(value) if p.type == "integer" else value)  # JSON's 3.0 is the integer 3
    if "\0" in value:
        raise ToolArgumentError(f"'{p.name}' contains a NUL byte")
    if p.type == "filepath":
        if value.startswith(("/", "~")):
            raise ToolArgumentError(f"'{p.name}' must be a path relative to the workspace, not {value!r}")
        real, inside = resolve_in_workspace(value, workspace)
        if not inside:
            raise ToolArgumentError(f"'{p.name}' resolves outside the workspace ({real}); refused")
        if p.must_exist and not real.exists():
            raise ToolArgumentError(f"'{p.name}': no such file in the workspace: {value}")
        rel = str(real.relative_to(workspace.resolve()))
        return "./" + rel if rel.startswith("-") else rel  # never read as an option
    if p.type == "url":
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ToolArgumentError(f"'{p.name}' must be an http(s) URL")
        if parsed.hostname not in p.allowed_hosts:
            allowed = ", ".join(p.allowed_hosts)
            raise ToolArgumentError(f"'{p.name}' host {parsed.hostname} is not allowed (allowed: {allowed})")
    if p.type == "string" and value.startswith("-") and p.flag is None:
        raise ToolArgumentError(f"'{p.name}' may not start with '-' (it could be read as an option)")
    return value


def validated_args(tool: DeclaredToolModel, args: dict[str, Any], workspace: Path) -> dict[str, str]:
    """The arguments (already checked against the tool's schema) as argv strings."""
    return {p.name: argv_value(p, args[p.name], workspace) for p in tool.config.params if p.name in args}


def build_argv(tool: DeclaredToolModel, values: dict[str, str]) -> list[str]:
    argv: list[str] = []
    used: set[str] = set()
    for part in tool.config.command or []:
        m = PLACEHOLDER.match(part)
        if m:
            used.add(m.group(1))
            if m.group(1) in values:
                argv.append(values[m.group(1)])
        else:
            argv.append(part)
    for p in tool.config.params:
        if p.name in values and p.name not in used:
            argv += ([p.flag] if p.flag else []) + [values[p.name]]
    return argv


# ---- handlers -----------------------------------------------------------------------------------------

def _cli_handler(tool: DeclaredToolModel):
    def handle(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        from framework_core.tools.execute import argv_command, run_in_sandbox

        argv = build_argv(tool, validated_args(tool, args, ctx.workspace))
        ran = run_in_sandbox("exec " + argv_command(argv), ctx, cwd=ctx.workspace)
        out = ran.outcome
        if out.exit_code == 127 and "not found" in out.stderr:
            raise ToolError(f"program not found: {argv[0]}")
        data = ran.result_data()
        if out.timed_out or out.stopped:
            raise ToolError(out.stopped or f"{tool.name} timed out after {ctx.settings.command_timeout_s:g} s "
                            "(its whole process group was stopped)", data=data)
        ran.raise_if_not_applied(data)
        return data
    return handle


def _api_request(tool: DeclaredToolModel, args: dict[str, Any], ctx: ToolContext) -> tuple[str, dict, dict]:
    values = validated_args(tool, args, ctx.workspace)
    headers: dict[str, str] = {}
    if tool.config.api_key_env:
        import os

        key = os.environ.get(tool.config.api_key_env, "")
        if not key:
            raise ToolError(f"{tool.name} needs the env var {tool.config.api_key_env}; it is not set")
        headers[tool.config.api_key_header] = tool.config.api_key_prefix + key
    typed: dict[str, Any] = {}
    for p in tool.config.params:
        if p.name in values:
            typed[p.name] = args[p.name] if p.type in ("integer", "number", "boolean") else values[p.name]
    return tool.config.base_url or "", headers, typed


def _api_handler(tool: DeclaredToolModel):
    def handle(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        import httpx2

        url, headers, params = _api_request(tool, args, ctx)
        secret = next(iter(headers.values()), None)
        try:
            if tool.config.method == "GET":
                resp = httpx2.get(url, params=params, headers=headers, timeout=tool.config.timeout_s)
            else:
                resp = httpx2.post(url, json=params, headers=headers, timeout=tool.config.timeout_s)
        except Exception as exc:  # network errors become a result the model can read
            raise ToolError(f"{tool.name}: request failed: {type(exc).__name__}") from None
        from framework_core.tools.result_budget import bound

        body = resp.text
        if secret:  # before anything is kept or shown
            body = body.replace(secret, "***").replace(secret.removeprefix(tool.config.api_key_prefix), "***")
        view = bound(body, ctx.result_budget(), ctx.saver(f"{tool.name}-response"))
        data: dict[str, Any] = {"status_code": resp.status_code, "body": view.text}
        if view.cut:
            data["cut"] = "cut: " + view.summary()
        return data
    return handle


def _preview(tool: DeclaredToolModel):
    def preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
        if tool.type == "cli":
            argv = build_argv(tool, validated_args(tool, args, ctx.workspace))
            return ActionPreview(f"Run declared tool {tool.name}", shlex.join(argv), "bash",
                                 ["runs without a shell: each value is one argument"])
        url, headers, params = _api_request(tool, args, ctx) if tool.config.api_key_env is None else (
            tool.config.base_url or "", {}, validated_args(tool, args, ctx.workspace))
        key_env = tool.config.api_key_env
        key_note = [f"adds the credential from ${key_env} (not shown)"] if key_env else []
        return ActionPreview(f"Call declared API tool {tool.name}",
                             f"{tool.config.method} {url}\n{json.dumps(params, indent=2)}", None, key_note)
    return preview


def to_spec(tool: DeclaredToolModel, source: Path) -> ToolSpec:
    handler = _cli_handler(tool) if tool.type == "cli" else _api_handler(tool)
    return ToolSpec(tool.name, tool.description, json_schema(tool.config.params), handler,
                    source=f"declared:{source}", kind="generic",
                    permission="ask" if tool.requires_approval else "always", preview=_preview(tool),
                    network=tool.network and tool.type == "cli", runs_process=tool.type == "cli")


def load_tools_file(path: Path, text: str | None = None) -> list[ToolSpec]:
    """Parse and validate a tools.yaml; any problem is a ConfigError naming file, line, key and problem.
    `text`: the file's text already read (a workspace's tools as the user trusted them), not read again."""
    from framework_core.config.load_errors import at_key, pydantic_error, type_name
    from framework_core.config.yaml_load import load_yaml, parse_yaml

    doc = load_yaml(path, what="tools file") if text is None else parse_yaml(text, path)
    raw = doc.data
    top: tuple[str, ...] = ("tools",) if isinstance(raw, dict) else ()
    entries = raw.get("tools") if isinstance(raw, dict) else raw
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise at_key(f"expected a list of tools (or a mapping with 'tools:'), not {type_name(entries)}", doc, top)
    specs, seen = [], set()
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        context = f"tool '{name or '#' + str(i + 1)}': "
        try:
            model = DeclaredToolModel.model_validate(entry)
        except ValidationError as exc:
            raise pydantic_error(exc, doc, at=(*top, i), context=context, model=DeclaredToolModel) from None
        if model.name in seen:
            raise at_key("declared twice; keep one", doc, (*top, i, "name"), context=context)
        seen.add(model.name)
        specs.append(to_spec(model, path))
    return specs
