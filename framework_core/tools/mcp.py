"""MCP client: servers run on one background asyncio loop thread; their tools join the shared registry.

Each server is held open by a task on that loop. A tool's error, a JSON-RPC error of a call and a call that
times out are results for the model; only the loss of the connection (a stdio server's process exiting, an
HTTP stream failing) restarts a server, with back-off and a limit. What the user should know (a server that
failed to start, stopped, changed its tools, logged an error) is queued once as a notice (`take_notices`); the
REPL's `on_notice` hook hears of each at once, so it can be said while the prompt waits (`ui/idle_notices.py`):
a sign-in address too. OAuth sign-in: `mcp_oauth.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from framework_core.config.models import McpServerSettings
from framework_core.errors import ToolError
from framework_core.tools.arguments import SchemaProblem
from framework_core.tools.base import ToolContext, ToolRegistry, ToolSpec
from framework_core.tools.mcp_calls import CallRunner
from framework_core.tools.mcp_config import config_notes, load_mcp_json, resolve_launch  # noqa: F401 - re-exported
from framework_core.tools.mcp_names import tool_name
from framework_core.tools.mcp_oauth import OAuthSignIn
from framework_core.tools.mcp_resources import Resources, list_catalog, root_notes, root_paths
from framework_core.tools.mcp_state import (BACKOFF_S, ERROR_LOG_LEVELS, LOG_NOTICE_EVERY_S, RESTART_WAIT_S,
                                            RETRY_AFTER_S, ServerStatus, _Server, describe, instructions_block,
                                            log_line, log_summary)
from framework_core.tools.result_budget import Saver, saver

__all__ = ["McpManager", "ServerStatus", "load_mcp_json", "tool_name"]


class McpManager:
    def __init__(self, servers: dict[str, McpServerSettings], registry: ToolRegistry, log_dir: Path,
                 workspace: Path) -> None:
        self.registry = registry
        self.workspace = workspace
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
        except OSError:  # a read-only or full home: the servers' logs go to a private temporary folder
            import tempfile

            log_dir = Path(tempfile.mkdtemp(prefix="laca-mcp-logs-"))
        self.log_dir = log_dir
        self._servers = {n: _Server(n, s, log_dir / f"mcp-{n}.log") for n, s in servers.items()}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._notices: list[tuple[str, str, str | None]] = []  # level, text, key (a later one replaces it)
        self._lock = threading.Lock()
        #: Called (on any thread) after a notice is queued: the REPL says it at once while its prompt waits.
        self.on_notice: Callable[[], None] | None = None
        self._sdk_log: logging.Handler | None = None
        self._closing = False
        #: The active model's context window in tokens (a smaller one gets a smaller result budget).
        self.window: Callable[[], int | None] = lambda: None
        #: Where the whole text of a cut result is saved; None: not kept.
        self.save: Saver | None = None
        #: Where images of results are saved (without a call's own context); None: not kept.
        self.outputs_dir: Path | None = None
        #: Answers a server's request for user input on the main thread; None: the capability is not offered.
        self.elicit: Callable[[Any], Any] | None = None
        #: argv put in front of a stdio server's command (the sandbox), given the server's name and settings.
        self.wrapper: Callable[[str, McpServerSettings], tuple[str, ...]] = lambda name, settings: ()
        self.environ: dict[str, str] = dict(os.environ)  # ${VAR} expansion only; servers never get it whole
        self.keep_env: tuple[str, ...] = ()  # names (globs) passed to stdio servers besides the allowlist
        #: Given a server's name and its tools' definitions (name, description, input_schema): None to use them,
        #: or why not (a trusted workspace server whose definitions changed: framework_core/config/trust_pins.py).
        self.vet_tools: Callable[[str, list[dict[str, Any]]], str | None] = lambda name, tools: None
        #: Given a server's name before each start: None to start it, or why not (a trusted workspace server
        #: whose script changed since it was trusted is not restarted with the change).
        self.vet_launch: Callable[[str], str | None] = lambda name: None
        self.backoff: tuple[float, ...] = BACKOFF_S  # waits before each restart after a lost connection
        self.log_notice_every_s = LOG_NOTICE_EVERY_S  # a server's logged errors are said at most this often
        self.calls = CallRunner(self)
        self.oauth = OAuthSignIn(self)  # sign-in of http and sse servers; where their tokens are kept
        self.resources = Resources(self)  # resources and prompts of ready servers; the model's reader tool

    def bind(self, *, window: Callable[[], int | None] | None = None, outputs_dir: Path | None = None) -> None:
        """Tie results to a session: the model's context window, and where cut results are saved."""
        if window is not None:
            self.window = window
        if outputs_dir is not None:
            self.save = saver(outputs_dir, prefix="mcp-result")
            self.outputs_dir = outputs_dir

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Return at once; servers connect in the background."""
        if self._thread is not None:
            return
        self._route_sdk_logging()
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="laca-mcp", daemon=True)
        self._thread.start()
        for server in self._servers.values():
            for note in config_notes(server.settings) + root_notes(server.name, server.settings, self.workspace):
                self.notice("warning", note)
            self._launch(server)

    def _route_sdk_logging(self) -> None:
        """The SDK logs through `logging`; without a handler its warnings would land on the terminal."""
        handler = logging.FileHandler(self.log_dir / "mcp-client.log", encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        sdk = logging.getLogger("mcp")
        sdk.addHandler(handler)
        sdk.propagate = False
        self._sdk_log = handler

    def _launch(self, server: _Server) -> None:
        assert self._loop is not None
        refused = self.vet_launch(server.name)
        if refused:
            server.fail(refused)
            self.notice("error", refused, key=f"launch:{server.name}")
            return
        server.gen += 1
        server.ready.clear()
        server.state, server.started_at = "starting", time.monotonic()
        asyncio.run_coroutine_threadsafe(self._hold(server, server.gen), self._loop)

    async def _hold(self, server: _Server, gen: int) -> None:
        from framework_core.tools.mcp_connection import Hooks, connect

        stop, lost = asyncio.Event(), asyncio.Event()
        server.stop, server.lost, server.task = stop, lost, asyncio.current_task()
        current = lambda: server.gen == gen  # noqa: E731
        why: str | None = None
        server.oauth_error = None
        try:
            launch = resolve_launch(server.name, server.settings, self.workspace, self.environ, self.keep_env)
            with open(server.log_path, "a", encoding="utf-8") as log:
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {server.name}\n")
                log.flush()
                hooks = Hooks(on_log=lambda p: self._on_log(server, log, p),
                              on_tools_changed=lambda: self._relist_soon(server, gen),
                              on_closed=lost.set, workspace=self.workspace,
                              wrapper=self.wrapper(server.name, server.settings),
                              elicit=self.calls.elicit_on_main if self.elicit else None,
                              on_http_error=server.http_error, auth=self.oauth.auth_for(server, launch),
                              on_catalog_changed=lambda: self._recatalog_soon(server, gen),
                              roots=root_paths(server.settings, self.workspace))
                timeout = server.settings.startup_timeout_s
                async with connect(launch, hooks, log, timeout) as conn:
                    listing = await asyncio.wait_for(conn.list_tools(timeout), timeout)
                    catalog = await list_catalog(server.name, conn.session, timeout)
                    if not current():
                        return
                    server.conn, server.instructions, server.catalog = conn, conn.instructions, catalog
                    self._register(server, listing)
                    restarted_after = server.error if server.state == "starting" and server.ever_ready else None
                    server.up()
                    if restarted_after:
                        self.notice("info", f"MCP server '{server.name}' stopped ({restarted_after}) and was "
                                            "restarted; what it held in memory is gone", key=f"restart:{server.name}")
                    await _first(stop, lost)
                    if not stop.is_set():
                        why = "the server's process exited" if launch.transport == "stdio" else "the connection closed"
        except asyncio.CancelledError:
            why = None if stop.is_set() else "cancelled"
        except BaseException as exc:  # noqa: BLE001 - any failure of a server is reported, never raised
            why = describe(exc, server)
        finally:
            if current():
                self._after_exit(server, None if stop.is_set() else why or "the server stopped")

    def _after_exit(self, server: _Server, why: str | None) -> None:
        """On the loop: decide what follows the end of a server's connection."""
        was_ready = server.state == "ready"
        server.conn = None
        if why is None:
            server.state = "stopped"
            server.ready.set()
            return
        attempt = server.next_attempt(was_ready, len(self.backoff))
        if attempt is None:
            server.fail(why)
            gave_up = " LACA gave up restarting it." if server.ever_ready else ""
            self.notice("error", f"MCP server '{server.name}' {'stopped' if server.ever_ready else 'failed to start'}: "
                                 f"{why}.{gave_up} See {server.log_path}")
            return
        server.state, server.error = "restarting", why
        server.ready.clear()
        if was_ready:
            self.notice("warning", f"MCP server '{server.name}' stopped ({why}); restarting it in "
                                   f"{self.backoff[attempt]:g} s", key=f"restart:{server.name}")
        assert self._loop is not None
        self._loop.call_later(self.backoff[attempt], self._relaunch, server, server.gen)

    def _relaunch(self, server: _Server, gen: int) -> None:
        if server.gen == gen and server.state == "restarting" and not self._closing:
            self._launch(server)

    def _register(self, server: _Server, listing: Any) -> None:
        self.registry.unregister_source(f"mcp:{server.name}")
        server.tools, server.notes = [], list(listing.dropped)
        refused = self.vet_tools(server.name, [{"name": t.name, "description": t.description,
                                                "input_schema": t.input_schema} for t in listing.tools])
        if refused:
            server.notes.append(refused)
            self.notice("warning", refused, key=f"pin:{server.name}")
            return
        for tool in listing.tools:
            execution = getattr(tool, "execution", None)
            if getattr(execution, "task_support", None) == "required":
                server.notes.append(f"tool '{tool.name}' hidden: it runs only as a task, which LACA does not offer")
                continue
            name = tool_name(server.name, tool.name)
            taken = self.registry.get(name)
            if taken is not None and (taken.server, taken.remote_name) != (server.name, tool.name):
                server.notes.append(f"tool '{tool.name}' hidden: its name {name} is taken by {taken.source}")
                continue
            perm = server.settings.tools.get(tool.name, server.settings.permission)
            spec = ToolSpec(name=name, description=(tool.description or f"{tool.name} from MCP server {server.name}"),
                            parameters=dict(tool.input_schema or {"type": "object", "properties": {}}),
                            handler=self._handler(server.name, tool.name), source=f"mcp:{server.name}",
                            kind="generic", permission=perm, server=server.name, remote_name=tool.name)
            try:
                spec.validator  # noqa: B018 - compiled here, once: every call is checked against it
            except SchemaProblem as exc:
                server.notes.append(f"tool '{tool.name}' left out: its inputSchema is not a valid JSON schema ({exc})")
                continue
            self.registry.register(spec, replace=True)
            server.tools.append(tool.name)
        if server.catalog is not None:
            server.notes += server.catalog.notes
        self.resources.register_reader(server)

    def _relist_soon(self, server: _Server, gen: int) -> None:
        task = asyncio.ensure_future(self._relist(server, gen))
        server.background.add(task)
        task.add_done_callback(server.background.discard)

    def _recatalog_soon(self, server: _Server, gen: int) -> None:
        """The server's resources or prompts changed: list them again (the old listing stays on failure)."""
        async def recatalog() -> None:
            conn = server.conn
            if conn is None or server.gen != gen:
                return
            catalog = await list_catalog(server.name, conn.session, server.settings.startup_timeout_s)
            if server.gen == gen:
                server.catalog = catalog
                self.resources.register_reader(server)
        task = asyncio.ensure_future(recatalog())
        server.background.add(task)
        task.add_done_callback(server.background.discard)

    async def _relist(self, server: _Server, gen: int) -> None:
        conn = server.conn
        if conn is None or server.gen != gen:
            return
        try:
            listing = await conn.list_tools(server.settings.startup_timeout_s)
        except Exception as exc:  # noqa: BLE001 - the old listing stays; the user hears why
            self.notice("warning", f"MCP server '{server.name}' changed its tools but listing them failed: "
                                   f"{describe(exc, server)}")
            return
        before = set(server.tools)
        self._register(server, listing)
        added, removed = sorted(set(server.tools) - before), sorted(before - set(server.tools))
        if added or removed:
            change = "; ".join(p for p in (f"new: {', '.join(added)}" if added else "",
                                            f"gone: {', '.join(removed)}" if removed else "") if p)
            self.notice("info", f"MCP server '{server.name}' changed its tools ({change})")

    def wait_ready(self, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        for server in self._servers.values():
            server.ready.wait(max(0.0, deadline - time.monotonic()))
        return [s.name for s in self._servers.values() if s.state == "starting"]

    def status(self) -> list[ServerStatus]:
        return [s.status() for s in self._servers.values()]

    def _on_log(self, server: _Server, log: Any, params: Any) -> None:
        """A server's log notification goes to its log file; an error (or worse) is also said to the user, at
        most once per `log_notice_every_s` per server, with how many came meanwhile (a server that logs errors
        all the time must not fill the screen)."""
        log_line(log, params)
        if str(params.level) not in ERROR_LOG_LEVELS:
            return
        now = time.monotonic()
        if server.log_said_at is not None and now - server.log_said_at < self.log_notice_every_s:
            server.log_unsaid += 1
            return
        more = server.log_unsaid
        what = f"logged {more + 1} errors since it last said one; the latest" if more else "logged an error"
        server.log_said_at, server.log_unsaid = now, 0
        self.notice("warning", f"MCP server '{server.name}' {what}: {log_summary(params)} (see {server.log_path})",
                    key=f"log:{server.name}")

    def notice(self, level: str, text: str, key: str | None = None) -> None:
        """Queue a notice for the user; one with the same `key` still waiting is replaced (said once)."""
        with self._lock:
            if key is not None:
                self._notices = [n for n in self._notices if n[2] != key]
            self._notices.append((level, text, key))
        hook = self.on_notice
        if hook is not None:
            try:
                hook()
            except Exception:  # noqa: BLE001 - a display problem must not break the server's loop
                pass

    def has_notices(self) -> bool:
        with self._lock:
            return bool(self._notices)

    def take_notices(self) -> list[tuple[str, str]]:
        """What happened to the servers since the last call: (level, text), each said once."""
        with self._lock:
            out, self._notices = self._notices, []
        return [(level, text) for level, text, _ in out]

    def instructions_prompt(self) -> str:
        """Servers' `instructions`, capped and marked as theirs, for the system prompt."""
        return instructions_block([(s.name, s.instructions) for s in self._servers.values()
                                   if s.state == "ready" and s.instructions])

    def restart(self, name: str) -> None:
        """End a server's connection, if any, and start it again (a new sign-in when its tokens are gone)."""
        server = self._servers[name]
        asyncio.run_coroutine_threadsafe(self._end(server), self.loop).result(timeout=15)
        self._launch(server)

    def stop_server(self, name: str, why: str) -> None:
        """End a server's connection; it stays stopped, with `why` shown in /mcp."""
        server = self._servers[name]
        asyncio.run_coroutine_threadsafe(self._end(server), self.loop).result(timeout=15)
        server.error = why

    async def _end(self, server: _Server) -> None:
        task = server.task
        if server.stop is not None:
            server.stop.set()
        if task is not None and not task.done():
            if server.state != "ready":
                task.cancel()  # still connecting (or waiting for a sign-in): nothing to close gracefully
            await asyncio.wait([task], timeout=6)
        server.state = "stopped"
        server.ready.set()

    def close(self) -> None:
        """Stop every server (a stdio server gets its stdin closed, then signals) and the loop."""
        loop = self._loop
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=15)
        except Exception:  # noqa: BLE001 - closing must finish whatever a server does
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._loop = self._thread = None
        if self._sdk_log is not None:
            logging.getLogger("mcp").removeHandler(self._sdk_log)
            self._sdk_log.close()
            self._sdk_log = None

    async def _shutdown(self) -> None:
        self._closing = True
        for server in self._servers.values():
            if server.stop is not None:
                server.stop.set()
            if server.state != "ready" and server.task is not None:
                server.task.cancel()  # still connecting: nothing to close gracefully
        tasks = [t for s in self._servers.values() for t in (s.task, *s.background) if t is not None and not t.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=6)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=3)

    # ---- calls ------------------------------------------------------------------------------------
    def _handler(self, server_name: str, remote: str):
        def handle(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
            return self.call(server_name, remote, args, ctx)
        return handle

    def ensure_running(self, server: _Server) -> None:
        """Wait for a server starting or restarting; try a failed one again after a while; else say why not."""
        if server.state == "failed" and time.monotonic() - server.failed_at >= RETRY_AFTER_S:
            self._launch(server)
        if server.state in ("starting", "restarting"):  # `ready` is set once the state settles
            server.ready.wait(RESTART_WAIT_S)
        if server.state != "ready" or server.conn is None:
            raise ToolError(f"MCP server '{server.name}' is not available ({server.error or server.state}); "
                            f"see {server.log_path}")

    def call(self, server_name: str, remote: str, args: dict[str, Any],
             ctx: ToolContext | None = None) -> dict[str, Any]:
        """Call a tool; the result's text is bounded by the output budget. Raises ToolError for the model."""
        if self._loop is None:
            raise ToolError("MCP is not running")
        server = self._servers[server_name]
        self.ensure_running(server)
        return self.calls.run(server, remote, args, ctx)

    def connection_lost(self, server: _Server) -> None:
        """A call saw the connection fail: end the holder so the restart policy takes over."""
        if self._loop is not None and server.lost is not None:
            self._loop.call_soon_threadsafe(server.lost.set)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop


async def _first(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
