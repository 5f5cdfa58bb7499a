"""OAuth sign-in to http and sse MCP servers (the MCP authorization spec), through the SDK's own client flow.

The SDK's `OAuthClientProvider`, given to the transport as its httpx auth, does the protocol: on a 401 it
reads the protected resource and authorization server metadata, registers LACA as a client (unless a
`client_id` is configured), runs the authorization code flow with PKCE, and refreshes tokens. LACA gives
it three things: where the tokens are kept (`mcp_oauth_store.TokenFile`), how the user is sent to the
browser (a notice with the URL, and the system browser where one can be expected), and how the answer
comes back (`mcp_oauth_browser.CallbackListener` on 127.0.0.1). While the user signs in, the server is
`authorizing`: the rest of LACA goes on without it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncGenerator, Callable

from framework_core.tools.mcp_oauth_browser import (CallbackListener, SignInFailed, free_port, open_browser,
                                                    redirect_uri, refusal)
from framework_core.tools.mcp_oauth_store import AUTH_DIR, TokenFile, token_files, token_path

if TYPE_CHECKING:
    from framework_core.tools.mcp import McpManager
    from framework_core.tools.mcp_config import Launch
    from framework_core.tools.mcp_state import _Server


class OAuthSignIn:
    """OAuth for the servers of one `McpManager`."""

    def __init__(self, manager: "McpManager") -> None:
        self.manager = manager
        #: Where the token files go; None: LACA's data folder.
        self.folder: Path | None = None
        #: Whether a sign-in in the browser can be offered (someone is at the terminal); stored tokens work anyway.
        self.interactive = True
        #: Opens the authorization URL (the user's browser); runs off the MCP loop.
        self.open_browser: Callable[[str], object] = open_browser

    def token_folder(self) -> Path:
        if self.folder is None:
            from framework_core.config.dirs import user_data_dir

            self.folder = user_data_dir() / AUTH_DIR
        return self.folder

    def auth_for(self, server: "_Server", launch: "Launch") -> Any:
        """The httpx auth for a server's transport, or None when OAuth is off for it."""
        if launch.oauth is None or launch.transport == "stdio":
            return None
        from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

        store = self._store(server.name, launch.url)
        port = launch.oauth.callback_port or store.port or free_port()
        store.data["callback_port"] = port
        uri = redirect_uri(port)
        store.expected_redirect = uri
        if launch.oauth.client_id:
            secret = launch.oauth.client_secret
            store.fixed_client = OAuthClientInformationFull(
                client_id=launch.oauth.client_id, client_secret=secret, redirect_uris=[uri],
                token_endpoint_auth_method="client_secret_post" if secret else "none")
        metadata = OAuthClientMetadata(client_name="LACA", redirect_uris=[uri],
                                       scope=" ".join(launch.oauth.scopes) or None)
        flow = _Flow(self, server, launch, store, port)
        return _provider_class()(launch.url, metadata, store, redirect_handler=flow.redirect,
                                 callback_handler=flow.callback, flow=flow)

    def _store(self, name: str, url: str) -> TokenFile:
        folder = self.token_folder()
        workspace = self.manager.workspace.resolve()
        inside = folder.resolve() == workspace or workspace in folder.resolve().parents
        store = TokenFile(None if inside else token_path(folder, name, url), name, url)
        if inside:
            store.problem = (f"LACA's data folder {folder} is inside the workspace, so the sign-in is kept in "
                             "memory only")
        return store

    def forget(self, name: str) -> list[Path]:
        """Delete every token file kept for server `name`. Returns the files deleted."""
        gone = []
        for path in token_files(self.token_folder(), name):
            try:
                path.unlink()
                gone.append(path)
            except FileNotFoundError:
                pass
        return gone


class _Flow:
    """One server's sign-in: the SDK's redirect and callback handlers, and what the user is told."""

    def __init__(self, owner: OAuthSignIn, server: "_Server", launch: "Launch", store: TokenFile, port: int) -> None:
        self.owner, self.server, self.launch, self.store, self.port = owner, server, launch, store, port
        self.listener: CallbackListener | None = None
        self.before = "starting"

    async def redirect(self, url: str) -> None:
        name, mgr = self.server.name, self.owner.manager
        if not self.owner.interactive:
            raise SignInFailed("it needs a sign-in in the browser, which this run cannot offer; start laca (the "
                               "REPL) once to sign in, and later runs reuse the tokens")
        self.listener = CallbackListener(self.port)
        await self.listener.start()
        self.before = self.server.state
        self.server.state, self.server.error = "authorizing", f"waiting for sign-in at {url}"
        self.server.ready.set()
        timeout = self.launch.oauth.timeout_s if self.launch.oauth else 300.0
        mgr.notice("warning", f"MCP server '{name}' needs you to sign in: open {url} in your browser (LACA waits "
                              f"{timeout / 60:g} min and goes on meanwhile)", key=f"oauth:{name}")
        asyncio.get_running_loop().run_in_executor(None, self.owner.open_browser, url)

    async def callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        assert self.listener is not None
        timeout = self.launch.oauth.timeout_s if self.launch.oauth else 300.0
        try:
            params = await self.listener.wait(timeout)
        except SignInFailed as exc:
            raise SignInFailed(f"{exc}; /mcp login {self.server.name} tries again") from None
        finally:
            self.listener.close()
            self._restore()
        why = refusal(params)
        if why:
            raise SignInFailed(f"{why}; /mcp login {self.server.name} tries again")
        if not params.get("code"):
            raise SignInFailed("the browser came back without an authorization code")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    def _restore(self) -> None:
        """Back to where the sign-in found the server: a connection being made, or one in use."""
        server = self.server
        if server.state != "authorizing":
            return
        server.error = None
        if self.before == "ready" and server.conn is not None:
            server.state = "ready"
            server.ready.set()
        else:
            server.state = "starting"
            server.ready.clear()

    def signed_in(self) -> None:
        name = self.server.name
        self.server.last_http = self.server.oauth_error = None  # the 401 that started the sign-in is answered
        kept = self.store.problem or f"the tokens are kept for later runs (/mcp logout {name} forgets them)"
        self.owner.manager.notice("info", f"MCP server '{name}': signed in; {kept}", key=f"oauth:{name}")

    def failed(self, exc: BaseException, context: Any) -> None:
        """The SDK's flow raised: keep a message for the user (see `mcp_state.describe`)."""
        if isinstance(exc, SignInFailed):
            self.server.oauth_error = f"sign-in failed: {exc}"
        elif self.launch.oauth_auto and context.oauth_metadata is None and context.protected_resource_metadata is None:
            return  # not an OAuth server: the plain 401 says what to do
        else:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.server.oauth_error = f"OAuth sign-in with {self.launch.url} failed: {text}"


def _provider_class() -> type:
    from mcp.client.auth import OAuthClientProvider

    class LacaOAuthProvider(OAuthClientProvider):
        """The SDK's provider, restoring what LACA stores besides tokens and reporting a failed flow."""

        def __init__(self, *args: Any, flow: _Flow, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._flow = flow

        async def _initialize(self) -> None:
            await super()._initialize()
            store = self._flow.store
            if self.context.current_tokens is not None and store.expires_at is not None:
                self.context.token_expiry_time = store.expires_at  # an expired token is refreshed, not sent
            if self.context.oauth_metadata is None:
                self.context.oauth_metadata = store.metadata  # the token endpoint, to refresh

        async def _handle_token_response(self, response: Any) -> None:
            self._flow.store.remember_metadata(self.context.oauth_metadata)
            await super()._handle_token_response(response)
            self._flow.signed_in()

        async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            except Exception as exc:
                self._flow.failed(exc, self.context)
                raise
            finally:
                await flow.aclose()

    return LacaOAuthProvider
