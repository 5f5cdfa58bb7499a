"""OAuth sign-in to an MCP server over HTTP, against a real OAuth-protected server (the SDK's server-side auth:
metadata, dynamic registration, authorize, token, bearer tokens; `mcp_servers/oauth_server.py`).

The "browser" is an httpx2 GET of the authorization URL that follows the server's redirect to LACA's callback
listener; the server's /authorize approves at once (or refuses, with OAUTH_REFUSE=1)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from framework_core.config.models import McpServerSettings
from framework_core.tools.base import ToolRegistry
from framework_core.tools.mcp import McpManager
from framework_core.tools.mcp_config import load_mcp_json
from tests.integration.mcp_servers import HERE, SLOW, free_port, served, wait_for

OAUTH = str(HERE / "oauth_server.py")


class Browser:
    """Visits each authorization URL it is given, following redirects back to LACA's callback."""

    def __init__(self) -> None:
        self.visited: list[str] = []

    def __call__(self, url: str) -> None:
        self.visited.append(url)
        httpx2.get(url, follow_redirects=True, timeout=10)


def manager(tmp_path: Path, servers: dict[str, McpServerSettings], browser: Any,
            on_notice: Any = None) -> McpManager:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    mgr = McpManager(servers, ToolRegistry(), tmp_path / "logs", workspace)
    mgr.oauth.folder = tmp_path / "data" / "mcp-oauth"
    mgr.oauth.open_browser = browser
    mgr.on_notice = on_notice  # the REPL's hook: each notice heard as it is queued
    mgr.start()
    return mgr


def settled(mgr: McpManager, name: str) -> str:
    """Wait until the server is ready or has failed; its state."""
    def state() -> str | None:
        s = next(st for st in mgr.status() if st.name == name)
        return s.state if s.state in ("ready", "failed") else None
    return str(wait_for(state, 30, f"server {name} to settle"))


@pytest.fixture()
def oauth_port() -> Any:
    port = free_port()
    with served([OAUTH, "--http", str(port)], port):
        yield port


def test_sign_in_then_the_tool_works_and_the_token_is_kept_private(tmp_path: Path, oauth_port: int) -> None:
    browser = Browser()
    settings = McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp", oauth=True)
    mgr = manager(tmp_path, {"secure": settings}, browser)
    try:
        assert settled(mgr, "secure") == "ready"
        result = mgr.call("secure", "echo", {"text": "signed in"})
    finally:
        mgr.close()
    files = list((tmp_path / "data" / "mcp-oauth").iterdir())
    assert (result["content"], len(browser.visited), len(files)) == ("signed in", 1, 1)
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert not files[0].is_relative_to(tmp_path / "ws")
    assert json.loads(files[0].read_text())["tokens"]["access_token"]


def test_a_second_start_reuses_the_stored_token(tmp_path: Path, oauth_port: int) -> None:
    settings = {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp", oauth=True)}
    first = manager(tmp_path, settings, Browser())
    settled(first, "secure")
    first.close()
    browser = Browser()
    second = manager(tmp_path, settings, browser)
    try:
        assert settled(second, "secure") == "ready"
        sign_ins = second.call("secure", "sign_ins", {})["content"]
    finally:
        second.close()
    assert (browser.visited, sign_ins) == ([], "1")


def test_an_expired_token_is_refreshed_without_a_new_sign_in(tmp_path: Path) -> None:
    """The stored token is made expired (its expiry moved two hours back), not let expire after a second of
    wall-clock time: under load that second ran out while the first manager still started, and it signed in
    again. The server counts the refresh, so a token sent without one fails the test."""
    port = free_port()
    with served([OAUTH, "--http", str(port)], port):
        settings = {"secure": McpServerSettings(url=f"http://127.0.0.1:{port}/mcp", oauth=True)}
        first = manager(tmp_path, settings, Browser())
        settled(first, "secure")
        first.close()
        stored = next((tmp_path / "data" / "mcp-oauth").iterdir())
        record = json.loads(stored.read_text())
        stored.write_text(json.dumps({**record, "expires_at": record["expires_at"] - 7200}))
        browser = Browser()
        second = manager(tmp_path, settings, browser)
        try:
            state = settled(second, "secure")
            sign_ins = second.call("secure", "sign_ins", {})["content"]
            refreshes = second.call("secure", "refreshes", {})["content"]
        finally:
            second.close()
    assert (state, browser.visited, sign_ins, refreshes) == ("ready", [], "1", "1")


def test_a_changed_url_does_not_reuse_the_tokens(tmp_path: Path, oauth_port: int) -> None:
    first = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp", oauth=True)},
                    Browser())
    settled(first, "secure")
    first.close()
    moved = f"http://localhost:{oauth_port}/mcp"  # the same server under another name: its metadata says otherwise
    second = manager(tmp_path, {"secure": McpServerSettings(url=moved, oauth=True)}, Browser())
    try:
        state, error = settled(second, "secure"), second.status()[0].error
    finally:
        second.close()
    assert (state, error) == ("failed", f"OAuth sign-in with {moved} failed: Protected resource "
                                        f"http://127.0.0.1:{oauth_port}/mcp does not match expected {moved}")


def test_without_oauth_key_a_401_with_oauth_metadata_starts_the_sign_in(tmp_path: Path, oauth_port: int) -> None:
    browser = Browser()
    mgr = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp")}, browser)
    try:
        assert settled(mgr, "secure") == "ready"
    finally:
        mgr.close()


def test_the_user_is_told_where_to_sign_in_at_once(tmp_path: Path, oauth_port: int) -> None:
    heard: list[bool] = []
    mgr = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp",
                                                         oauth={"timeout_s": 2})}, lambda url: None,
                  on_notice=lambda: heard.append(True))
    told: list[str] = []

    def sign_in_notices() -> list[str]:
        told.extend(text for _, text in mgr.take_notices())
        return [text for text in told if "needs you to sign in" in text]
    try:
        found = wait_for(sign_in_notices, 20, "the sign-in notice")
    finally:
        mgr.close()
    assert heard and found[0].startswith("MCP server 'secure' needs you to sign in: open "
                                         f"http://127.0.0.1:{oauth_port}/authorize?")


def test_sse_servers_sign_in_too(tmp_path: Path) -> None:
    port = free_port()
    with served([OAUTH, "--sse", str(port)], port):
        mgr = manager(tmp_path, {"legacy": McpServerSettings(type="sse", url=f"http://127.0.0.1:{port}/sse",
                                                             oauth=True)}, Browser())
        try:
            settled(mgr, "legacy")
            result = mgr.call("legacy", "echo", {"text": "over sse"})
        finally:
            mgr.close()
    assert result["content"] == "over sse"


def test_a_refused_sign_in_fails_the_server_and_the_others_work(tmp_path: Path) -> None:
    port = free_port()
    with served([OAUTH, "--http", str(port)], port, env={"OAUTH_REFUSE": "1"}):
        mgr = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{port}/mcp", oauth=True),
                                 "plain": McpServerSettings(command=sys.executable, args=[SLOW])}, Browser())
        try:
            settled(mgr, "secure")
            settled(mgr, "plain")
            error = next(s for s in mgr.status() if s.name == "secure").error
            plain = mgr.call("plain", "echo", {"text": "still here"})["content"]
        finally:
            mgr.close()
    assert (error, plain) == ("sign-in failed: the sign-in was refused (access_denied: the user said no); "
                              "/mcp login secure tries again", "still here")


def test_a_sign_in_nobody_finishes_times_out_with_a_clear_message(tmp_path: Path, oauth_port: int) -> None:
    mgr = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp",
                                                         oauth={"timeout_s": 1})}, lambda url: None)
    try:
        settled(mgr, "secure")
        error = mgr.status()[0].error
        notices = [text for _, text in mgr.take_notices()]
    finally:
        mgr.close()
    assert error == "sign-in failed: no sign-in within 1 s; /mcp login secure tries again"
    assert any(n.startswith("MCP server 'secure' failed to start: sign-in failed: no sign-in") for n in notices)


def test_login_after_a_missed_sign_in_signs_in(tmp_path: Path, oauth_port: int) -> None:
    mgr = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp",
                                                         oauth={"timeout_s": 1})}, lambda url: None)
    try:
        settled(mgr, "secure")
        mgr.oauth.open_browser = Browser()
        mgr.restart("secure")
        assert settled(mgr, "secure") == "ready"
    finally:
        mgr.close()


def test_a_run_without_a_terminal_does_not_offer_a_browser_sign_in(tmp_path: Path, oauth_port: int) -> None:
    browser = Browser()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    mgr = McpManager({"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp", oauth=True)},
                     ToolRegistry(), tmp_path / "logs", workspace)
    mgr.oauth.folder, mgr.oauth.open_browser, mgr.oauth.interactive = tmp_path / "data", browser, False
    mgr.start()
    try:
        settled(mgr, "secure")
        error = mgr.status()[0].error or ""
    finally:
        mgr.close()
    assert (error.startswith("sign-in failed: it needs a sign-in in the browser, which this run cannot offer"),
            browser.visited) == (True, [])


def test_logout_forgets_the_tokens(tmp_path: Path, oauth_port: int) -> None:
    mgr = manager(tmp_path, {"secure": McpServerSettings(url=f"http://127.0.0.1:{oauth_port}/mcp", oauth=True)},
                  Browser())
    try:
        settled(mgr, "secure")
        gone = mgr.oauth.forget("secure")
        mgr.stop_server("secure", "signed out")
        state = mgr.status()[0].state
    finally:
        mgr.close()
    assert (len(gone), list((tmp_path / "data" / "mcp-oauth").iterdir()), state) == (1, [], "stopped")


def test_oauth_is_read_from_mcp_json_in_claude_codes_spelling(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"t": {
        "type": "http", "url": "https://x/mcp", "oauth": {"clientId": "abc", "callbackPort": 8765}}}}))
    oauth = load_mcp_json(tmp_path)["t"].oauth_settings
    assert (oauth.client_id, oauth.callback_port) == ("abc", 8765)


def test_mcp_logout_in_the_repl_deletes_the_tokens_kept_in_lacas_data_folder(workspace: Path, oauth_port: int,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import os

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from framework_core.core.approval import ScriptedApprover
    from framework_core.config.load import Overrides, load_config
    from framework_core.core.session import open_session
    from framework_core.ui.render import EventRenderer
    from framework_core.ui.repl import Repl
    from framework_core.app.wiring import build_agent

    url = f"http://127.0.0.1:{oauth_port}/mcp"
    first = McpManager({"secure": McpServerSettings(url=url, oauth=True)}, ToolRegistry(), workspace.parent / "logs",
                       workspace)
    first.oauth.open_browser = Browser()
    first.start()
    settled(first, "secure")
    first.close()  # signed in once, the tokens kept in LACA's data folder
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    (workspace / "framework_config.yaml").write_text(f"mcp_servers:\n  secure:\n    url: {url}\n    oauth: true\n")
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None)
    renderer = EventRenderer(console)
    folder = Path(os.environ["XDG_DATA_HOME"]) / "laca" / "mcp-oauth"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        parts = build_agent(load_config(workspace, Overrides()), events=renderer, approver=ScriptedApprover(),
                            session=open_session(folder.parent), start_mcp=True, elicit=lambda params: None)
        repl = Repl(parts.facade, console, renderer, pt_input=pipe, pt_output=DummyOutput())
        try:
            ready = settled(parts.agent.mcp, "secure")  # with the stored token: no browser was given
            repl.handle("/mcp logout secure")
            state = parts.agent.mcp.status()[0].state
        finally:
            parts.agent.mcp.close()
    assert (ready, state, list(folder.iterdir())) == ("ready", "stopped", [])
    assert "Forgot the sign-in of 'secure' (1 file deleted from" in buf.getvalue()
