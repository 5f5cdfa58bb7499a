"""An MCP server that requires OAuth, built on the SDK's own server-side auth: protected resource metadata,
authorization server metadata, dynamic client registration, authorize and token endpoints, bearer tokens.

The provider keeps everything in memory. Its /authorize signs nobody in: it redirects at once to the
client's redirect_uri with a code (or, with OAUTH_REFUSE=1 in its environment, with error=access_denied;
OAUTH_TOKEN_S sets how long an access token lasts),
so a test's "browser" is one GET that follows the redirect. Tools: `echo`, and `sign_ins` (how many
authorization codes were issued, so a test can tell a reused token from a new sign-in).

`--http PORT` serves Streamable HTTP at http://127.0.0.1:PORT/mcp; `--sse PORT` SSE at /sse.
"""

from __future__ import annotations

import os
import secrets
import sys
import time

from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, AuthorizeError,
                                      RefreshToken, construct_redirect_uri)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

TOKEN_LIFETIME_S = int(os.environ.get("OAUTH_TOKEN_S", "3600"))  # a test of refreshing sets a short one


class MemoryProvider:
    """`OAuthAuthorizationServerProvider` in memory, approving every request without a login page."""

    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.sign_ins = 0
        self.refreshes = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id or ""] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if self.refuse:
            raise AuthorizeError("access_denied", "the user said no")
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        self.sign_ins += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        found = self.codes.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(client.client_id or "", code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.refreshes += 1
        return self._issue(client.client_id or "", scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        return found if found is not None and (found.expires_at or 0) > time.time() else None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TOKEN_LIFETIME_S, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=TOKEN_LIFETIME_S,
                          scope=" ".join(scopes) or None, refresh_token=refresh)


def build(port: int, path: str) -> MCPServer:
    provider = MemoryProvider(refuse=os.environ.get("OAUTH_REFUSE") == "1")
    base = f"http://127.0.0.1:{port}"
    auth = AuthSettings(issuer_url=base, resource_server_url=f"{base}{path}", validate_token_resource=True,
                        client_registration_options=ClientRegistrationOptions(enabled=True))
    server = MCPServer("oauth-test-server", auth_server_provider=provider, auth=auth)

    @server.tool()
    def echo(text: str) -> str:
        """Repeat the text."""
        return text

    @server.tool()
    def sign_ins() -> int:
        """How many times a client was sent through /authorize."""
        return provider.sign_ins

    @server.tool()
    def refreshes() -> int:
        """How many times a client traded a refresh token for a new access token."""
        return provider.refreshes

    return server


if __name__ == "__main__":
    print("oauth-test-server starting (this line goes to the log)", file=sys.stderr, flush=True)
    kind, port = sys.argv[1], int(sys.argv[2])
    if kind == "--sse":
        build(port, "/sse").run("sse", host="127.0.0.1", port=port)
    else:
        build(port, "/mcp").run("streamable-http", host="127.0.0.1", port=port)
