"""Where an MCP server's OAuth tokens are kept: one JSON file per server name and URL, mode 0600.

The files live in LACA's data folder (`mcp-oauth/`), which the sandbox hides from commands and `readFile`
treats as credentials; never in the workspace. The file name carries a digest of the server's name and URL,
so a server whose URL changed signs in again instead of sending its tokens to the new address. Implements
the SDK's `TokenStorage` protocol, and keeps what the SDK does not store itself: when the access token
expires, the authorization server's metadata (for refreshing without a new sign-in) and the callback port
the client was registered with.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

AUTH_DIR = "mcp-oauth"


def token_path(folder: Path, server: str, url: str) -> Path:
    digest = hashlib.sha256(f"{server}\n{url}".encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", server)[:40] or "server"
    return folder / f"{safe}-{digest}.json"


def token_files(folder: Path, server: str) -> list[Path]:
    """Every file kept for `server`, whatever its URL was."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", server)[:40] or "server"
    try:
        return sorted(p for p in folder.glob(f"{safe}-*.json") if _names(p, server))
    except OSError:
        return []


def _names(path: Path, server: str) -> bool:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("server") == server
    except (OSError, ValueError, AttributeError):
        return False


class TokenFile:
    """The SDK's `TokenStorage` over one file (or memory only, when `path` is None)."""

    def __init__(self, path: Path | None, server: str, url: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {"server": server, "url": url}
        self.problem: str | None = None  # why the tokens could not be saved, for the user
        self.fixed_client: Any = None  # a client registered in advance (oauth.client_id): used, never stored
        self.expected_redirect: str | None = None  # a stored registration for another callback is not reused
        if path is not None:
            self._load(path, url)

    def _load(self, path: Path, url: str) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self.problem = f"could not read {path} ({exc}); signing in again"
            return
        if isinstance(data, dict) and data.get("url") == url:
            self.data.update(data)

    # ---- the SDK's TokenStorage -------------------------------------------------------------------
    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return _model(OAuthToken, self.data.get("tokens"))

    async def set_tokens(self, tokens: Any) -> None:
        self.data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self.data["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self.save()

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.fixed_client is not None:
            return self.fixed_client
        info = _model(OAuthClientInformationFull, self.data.get("client_info"))
        registered = map(str, info.redirect_uris or []) if info is not None else ()
        if info is not None and self.expected_redirect and self.expected_redirect not in registered:
            return None
        return info

    async def set_client_info(self, client_info: Any) -> None:
        if self.fixed_client is not None:
            return
        self.data["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        self.save()

    # ---- what LACA keeps besides --------------------------------------------------------------------
    @property
    def expires_at(self) -> float | None:
        value = self.data.get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def metadata(self) -> Any:
        from mcp.shared.auth import OAuthMetadata

        return _model(OAuthMetadata, self.data.get("auth_server"))

    def remember_metadata(self, metadata: Any) -> None:
        if metadata is not None:
            self.data["auth_server"] = metadata.model_dump(mode="json", exclude_none=True)

    @property
    def port(self) -> int | None:
        value = self.data.get("callback_port")
        return value if isinstance(value, int) else None

    def save(self) -> None:
        """Write the whole file atomically, readable by the user only."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.data, fh, indent=1)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            self.problem = f"could not save the sign-in to {self.path} ({exc.strerror or exc}); it lasts this run only"


def _model(cls: Any, raw: Any) -> Any:
    from pydantic import ValidationError

    if not isinstance(raw, dict):
        return None
    try:
        return cls.model_validate(raw)
    except ValidationError:
        return None
