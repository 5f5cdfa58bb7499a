"""A `.mcp.json` as Claude Code writes it works unchanged: type, headers, ${VAR} and ${VAR:-default}, LACA's own
keys, unknown keys reported; and each transport it names (stdio, http, sse) is reached, headers included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framework_core.config.models import McpServerSettings
from framework_core.errors import ConfigError
from framework_core.tools.base import ToolRegistry
from framework_core.tools.mcp import McpManager, load_mcp_json
from framework_core.tools.mcp_config import config_notes, expand, resolve_launch
from tests.integration.mcp_servers import CASES, SLOW, free_port, served


def write(ws: Path, servers: dict) -> Path:
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return ws


CLAUDE = {
    "github": {"type": "http", "url": "https://api.example.com/mcp/", "headers": {"Authorization": "Bearer ${GH_PAT}"}},
    "legacy": {"type": "sse", "url": "${SSE_URL:-http://localhost:9000/sse}"},
    "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=${TZ_NAME:-UTC}"],
             "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "RETRIES": 3}},
}


def test_claude_codes_keys_are_read(tmp_path: Path) -> None:
    servers = load_mcp_json(write(tmp_path, CLAUDE))
    assert {n: s.transport for n, s in servers.items()} == {"github": "http", "legacy": "sse", "time": "stdio"}


def test_headers_are_kept(tmp_path: Path) -> None:
    assert load_mcp_json(write(tmp_path, CLAUDE))["github"].headers == {"Authorization": "Bearer ${GH_PAT}"}


def test_numbers_in_env_become_strings(tmp_path: Path) -> None:
    assert load_mcp_json(write(tmp_path, CLAUDE))["time"].env["RETRIES"] == "3"


def test_variables_are_expanded_at_launch_in_env_args_url_and_headers(tmp_path: Path) -> None:
    servers = load_mcp_json(write(tmp_path, CLAUDE))
    env = {"GH_PAT": "ghp_1", "GITHUB_TOKEN": "ghp_2", "TZ_NAME": "Europe/Paris"}
    got = [resolve_launch(n, servers[n], tmp_path, env) for n in ("github", "legacy", "time")]
    assert (got[0].headers, got[1].url, got[2].args, got[2].env["GITHUB_TOKEN"]) == (
        {"Authorization": "Bearer ghp_1"}, "http://localhost:9000/sse",
        ("mcp-server-time", "--local-timezone=Europe/Paris"), "ghp_2")


def test_the_loaded_settings_keep_the_placeholders_not_the_secrets(tmp_path: Path) -> None:
    assert load_mcp_json(write(tmp_path, CLAUDE))["time"].env["GITHUB_TOKEN"] == "${GITHUB_TOKEN}"


def test_a_missing_variable_is_named_with_the_fix(tmp_path: Path) -> None:
    servers = load_mcp_json(write(tmp_path, CLAUDE))
    with pytest.raises(ConfigError, match=r"needs the environment variable\(s\) GH_PAT.*\$\{GH_PAT:-value\}"):
        resolve_launch("github", servers["github"], tmp_path, {})


@pytest.mark.parametrize("text, env, expected", [
    ("${A}", {"A": "1"}, "1"), ("${A:-d}", {}, "d"), ("${A:-d}", {"A": ""}, "d"), ("${A}", {"A": ""}, ""),
    ("x${A}y${B:-z}", {"A": "-"}, "x-yz"), ("$A ${A", {"A": "1"}, "$A ${A")])
def test_expansion_follows_the_shell(text: str, env: dict, expected: str) -> None:
    assert expand(text, env, []) == expected


def test_laca_keys_are_accepted_in_mcp_json(tmp_path: Path) -> None:
    s = load_mcp_json(write(tmp_path, {"t": {"command": "x", "permission": "always", "tools": {"a": "never"},
                                             "output_budget_chars": 4000, "call_timeout_s": 5}}))["t"]
    assert (s.permission, s.tools, s.output_budget_chars, s.call_timeout_s) == ("always", {"a": "never"}, 4000, 5)


def test_disabled_servers_are_not_active(tmp_path: Path) -> None:
    assert not load_mcp_json(write(tmp_path, {"t": {"command": "x", "disabled": True}}))["t"].active


def test_unknown_keys_are_reported_not_fatal(tmp_path: Path) -> None:
    s = load_mcp_json(write(tmp_path, {"t": {"command": "x", "autoApprove": ["a"]}}))["t"]
    assert config_notes(s) == [".mcp.json: server 't': unknown key 'autoApprove' ignored (LACA reads: "
                               f"{', '.join(McpServerSettings.model_fields)})"]


def test_every_key_of_the_settings_is_read_from_mcp_json(tmp_path: Path) -> None:
    raw = {"command": "x", "call_timeout_s": 5, "startup_timeout_s": 7, "output_budget_chars": 4000, "cwd": "/w"}
    raw.update({k: False for k, f in McpServerSettings.model_fields.items() if f.annotation in (bool, "bool")})
    s = load_mcp_json(write(tmp_path, {"t": raw}))["t"]
    assert config_notes(s) == [] and all(getattr(s, k) == v for k, v in raw.items())


def test_oauth_is_a_known_key(tmp_path: Path) -> None:
    s = load_mcp_json(write(tmp_path, {"t": {"type": "http", "url": "https://x/mcp", "oauth": {"clientId": "a"}}}))["t"]
    assert config_notes(s) == []


def test_a_bad_oauth_key_is_named_with_what_oauth_reads(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"line 1 \(key 'mcpServers.t.oauth'\): server 't': clientID: Extra inputs "
                                          r"are not permitted \(oauth reads: client_id"):
        load_mcp_json(write(tmp_path, {"t": {"type": "http", "url": "https://x/mcp", "oauth": {"clientID": "a"}}}))


def test_oauth_on_a_stdio_server_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="oauth applies to http and sse servers only"):
        load_mcp_json(write(tmp_path, {"t": {"command": "x", "oauth": True}}))


def test_an_authorization_header_turns_the_automatic_sign_in_off() -> None:
    assert McpServerSettings(url="http://x/mcp", headers={"Authorization": "Bearer t"}).oauth_settings is None


@pytest.mark.parametrize(("text", "where", "problem"), [
    ('{\n "mcpServers": {\n  "t": {\n   "args": ["x"]\n  }\n }\n}', "line 3 (key 'mcpServers.t')",
     "server 't': a stdio server needs a command (or give a url with type http or sse)"),
    ('{\n "mcpServers": {\n  "t": {"command": "x",\n   "call_timeout_s": "soon"}}}',
     "line 4 (key 'mcpServers.t.call_timeout_s')",
     "server 't': Input should be a valid number, unable to parse string as a number (got 'soon')"),
    ('{"mcpServers": {\n  "t": {"command": "x",\n   "tools": {"a": "sometimes"}}}}',
     "line 3 (key 'mcpServers.t.tools.a')",
     "server 't': Input should be 'always', 'ask' or 'never' (got 'sometimes')"),
    ('{"mcpServers": {\n  "t": 5}}', "line 2 (key 'mcpServers.t')", "server 't' must be an object, not a number"),
    ('{"mcpServers": {},\n "mcpServers": []}', "line 2 (key 'mcpServers')",
     "duplicate key 'mcpServers' in one object (first given on line 1); keep only one"),
    ('{"servers": {}}', "", "(key 'mcpServers'): 'mcpServers' must be an object of servers by name; it is missing"),
    ("{\n  broken", "line 2",
     "invalid JSON: Expecting property name enclosed in double quotes. Fix the syntax on that line."),
])
def test_a_broken_file_names_file_line_key_and_problem(tmp_path: Path, text: str, where: str, problem: str) -> None:
    (tmp_path / ".mcp.json").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_mcp_json(tmp_path)
    assert str(err.value) == f"{tmp_path / '.mcp.json'}" + (f", {where}: " if where else " ") + problem


def test_streamable_http_aliases_mean_http() -> None:
    assert McpServerSettings(type="streamable-http", url="http://x/mcp").transport == "http"


# ---- the transports, reached -----------------------------------------------------------------------------
def started(tmp_path: Path, settings: McpServerSettings, environ: dict[str, str] | None = None) -> McpManager:
    mgr = McpManager({"remote": settings}, ToolRegistry(), tmp_path, tmp_path)
    if environ:
        mgr.environ.update(environ)
    mgr.start()
    mgr.wait_ready(30)
    return mgr


def test_http_headers_from_the_environment_are_sent(tmp_path: Path) -> None:
    port = free_port()
    with served([CASES, "--http", str(port)], port, env={"CASES_TOKEN": "s3cret"}):
        settings = McpServerSettings(type="http", url=f"http://127.0.0.1:{port}/mcp",
                                     headers={"Authorization": "Bearer ${MY_TOKEN}"})
        mgr = started(tmp_path, settings, {"MY_TOKEN": "s3cret"})
        try:
            assert mgr.call("remote", "echo", {"text": "over http"})["content"] == "over http"
        finally:
            mgr.close()


def test_http_401_says_the_server_wants_credentials(tmp_path: Path) -> None:
    port = free_port()
    with served([CASES, "--http", str(port)], port, env={"CASES_TOKEN": "s3cret"}):
        mgr = started(tmp_path, McpServerSettings(type="http", url=f"http://127.0.0.1:{port}/mcp"))
        error = mgr.status()[0].error or ""
        mgr.close()
    assert error.startswith(f"HTTP 401 Unauthorized from http://127.0.0.1:{port}/mcp: the server wants credentials")


def test_http_tool_errors_are_results(tmp_path: Path) -> None:
    from framework_core.errors import ToolError

    port = free_port()
    with served([SLOW, "--http", str(port)], port):
        mgr = started(tmp_path, McpServerSettings(url=f"http://127.0.0.1:{port}/mcp", call_timeout_s=5))
        try:
            with pytest.raises(ToolError, match="reported an error"):
                mgr.call("remote", "fail", {})
        finally:
            mgr.close()


def test_sse_servers_are_reached(tmp_path: Path) -> None:
    port = free_port()
    with served([SLOW, "--sse", str(port)], port):
        mgr = started(tmp_path, McpServerSettings(type="sse", url=f"http://127.0.0.1:{port}/sse"))
        try:
            assert mgr.call("remote", "echo", {"text": "over sse"})["content"] == "over sse"
        finally:
            mgr.close()


def test_sdk_log_lines_go_to_the_log_not_the_screen(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    with served([SLOW, "--http", str(port)], port) as proc:
        mgr = started(tmp_path, McpServerSettings(url=f"http://127.0.0.1:{port}/mcp", call_timeout_s=5))
        proc.terminate()
        proc.wait(10)
        mgr.close()  # terminating the session with a dead server makes the SDK log a warning
    assert "Session termination failed" not in capfd.readouterr().err


def test_a_lost_http_server_is_not_quoted_from_its_log(tmp_path: Path) -> None:
    """An http server's log file holds its log messages (not its stderr): the last one is not why it went."""
    from framework_core.errors import ToolError

    port = free_port()
    with served([CASES, "--http", str(port)], port) as proc:
        mgr = started(tmp_path, McpServerSettings(type="http", url=f"http://127.0.0.1:{port}/mcp"))
        try:
            mgr.call("remote", "echo", {"text": "logged"})  # the server logs "echo called with 'logged'"
            proc.terminate()
            proc.wait(10)
            with pytest.raises(ToolError) as err:
                mgr.call("remote", "echo", {"text": "gone"})
        finally:
            mgr.close()
    assert "echo called" not in str(err.value)
