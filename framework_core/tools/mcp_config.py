"""MCP server configuration: a workspace `.mcp.json` as Claude Code writes it, `${VAR}` expansion, the launch.

`.mcp.json` holds `{"mcpServers": {name: {type, command, args, env, url, headers, oauth, ...}}}`. LACA's own keys
(`permission`, `tools`, `disabled`, `output_budget_chars`, timeouts) are read there too; other keys are
reported and ignored. `${VAR}` and `${VAR:-default}` are expanded only when a server starts, so the values
of secrets never sit in the loaded configuration.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from framework_core.config.models import McpOAuthSettings, McpServerSettings
from framework_core.errors import ConfigError

MCP_JSON = ".mcp.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_KNOWN = tuple(McpServerSettings.model_fields)  # every key of LACA's own settings is read there too
_STRING_MAPS = ("env", "headers")


@dataclass(frozen=True)
class Launch:
    """How one server is reached once `${VAR}`s are expanded: a command (stdio) or a url (http, sse)."""

    transport: Literal["stdio", "http", "sse"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    base_env: dict[str, str] = field(default_factory=dict)  # of LACA's environment, what the allowlist passes
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    oauth: McpOAuthSettings | None = None  # OAuth sign-in (http, sse), its client id and secret expanded
    oauth_auto: bool = False  # not asked for: used only if the server answers 401 with OAuth metadata


def expand(value: str, environ: Mapping[str, str], missing: list[str]) -> str:
    """`${VAR}` and `${VAR:-default}` from `environ`; names without a value or default go to `missing`."""
    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = environ.get(name)
        if value or (value is not None and default is None):
            return value
        if default is not None:  # as in the shell, ":-" also replaces an empty value
            return default
        missing.append(name)
        return ""
    return _VAR.sub(sub, value)


def resolve_launch(name: str, settings: McpServerSettings, workspace: Path, environ: Mapping[str, str],
                   keep_env: Sequence[str] = ()) -> Launch:
    """Expand a server's settings for starting it. Raises ConfigError naming any variable that is not set.
    A stdio server gets what the environment allowlist passes of `environ` (as a command does: proxy variables
    only with the network; `keep_env` adds names), then its own `env:` entries."""
    from framework_core.sandbox.environment import command_env

    missing: list[str] = []
    x = lambda v: expand(v, environ, missing)  # noqa: E731
    launch = Launch(settings.transport, command=x(settings.command or ""), args=tuple(x(a) for a in settings.args),
                    env={k: x(v) for k, v in settings.env.items()},
                    base_env=command_env(environ, keep_env, network=settings.network or not settings.sandbox)[0]
                    if settings.transport == "stdio" else {}, cwd=x(settings.cwd or "") or str(workspace),
                    url=x(settings.url or ""), headers={k: x(v) for k, v in settings.headers.items()},
                    oauth=_expand_oauth(settings.oauth_settings, x), oauth_auto=settings.oauth is None)
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        raise ConfigError(f"MCP server '{name}' needs the environment variable(s) {names}: set them before starting "
                          f"LACA, or give a default in the config as ${{{missing[0]}:-value}}")
    return launch


def _expand_oauth(oauth: McpOAuthSettings | None, x: Any) -> McpOAuthSettings | None:
    if oauth is None:
        return None
    return oauth.model_copy(update={"client_id": x(oauth.client_id) if oauth.client_id else None,
                                    "client_secret": x(oauth.client_secret) if oauth.client_secret else None})


def stdio_parameters(launch: Launch, wrapper: Sequence[str] = ()) -> Any:
    """The one place a stdio server's process is described: argv (after an optional wrapper such as a
    sandbox), environment and working directory: the allowlisted part of LACA's environment and the server's
    own `env:` (the SDK adds HOME, LOGNAME, PATH, SHELL, TERM and USER, which the allowlist passes anyway), so
    no other variable of LACA's (API keys included) reaches the server."""
    from mcp.client.stdio import StdioServerParameters

    argv = [*wrapper, launch.command, *launch.args]
    return StdioServerParameters(command=argv[0], args=argv[1:], env={**launch.base_env, **launch.env}, cwd=launch.cwd,
                                 encoding_error_handler="replace")


def load_mcp_json(workspace: Path, text: str | None = None) -> dict[str, McpServerSettings]:
    """Read a workspace `.mcp.json` (or parse `text`, its text as already read: the bytes the user trusted).
    Unknown keys are noted on the server's settings (see `config_notes`); errors name the file, the line and
    the key."""
    from pydantic import ValidationError

    from framework_core.config.load_errors import at_key, pydantic_error, type_name
    from framework_core.config.yaml_load import load_json_doc, parse_json_doc

    doc = (load_json_doc(workspace / MCP_JSON, what=MCP_JSON) if text is None
           else parse_json_doc(text, workspace / MCP_JSON))
    servers = doc.data.get("mcpServers") if isinstance(doc.data, dict) else None
    if not isinstance(doc.data, dict):
        raise at_key(f"the top level must be an object with a 'mcpServers' object, not {type_name(doc.data)}", doc, ())
    if not isinstance(servers, dict):
        got = "it is missing" if servers is None else f"not {type_name(servers)}"
        raise at_key(f"'mcpServers' must be an object of servers by name; {got}", doc, ("mcpServers",))
    out: dict[str, McpServerSettings] = {}
    for name, raw in servers.items():
        at = ("mcpServers", name)
        if not isinstance(raw, dict):
            raise at_key(f"server '{name}' must be an object, not {type_name(raw)}", doc, at)
        fields = {k: _stringify(k, v) for k, v in raw.items() if k in _KNOWN}
        try:
            settings = McpServerSettings(**fields)
        except ValidationError as exc:
            raise pydantic_error(exc, doc, at=at, context=f"server '{name}': ", model=McpServerSettings) from None
        settings._notes = [_unknown_note(name, key) for key in raw if key not in _KNOWN]
        out[name] = settings
    return out


def config_notes(settings: McpServerSettings) -> list[str]:
    """What loading a server's settings had to say (unknown keys), for the user."""
    return list(settings._notes)


def _stringify(key: str, value: Any) -> Any:
    """JSON numbers and booleans in env and headers become the strings a process or an HTTP header needs."""
    if key in _STRING_MAPS and isinstance(value, dict):
        return {k: (json.dumps(v) if isinstance(v, bool) else str(v)) if isinstance(v, (int, float, bool)) else v
                for k, v in value.items()}
    return value


def _unknown_note(server: str, key: str) -> str:
    return f"{MCP_JSON}: server '{server}': unknown key '{key}' ignored (LACA reads: {', '.join(_KNOWN)})"
