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
import re
import time
from pathlib import Path
from typing import Any

AUTH_DIR = "mcp-oauth"
CHANGED_BY = ("tokens", "expires_at", "client_info")  # written by a sign-in or a refresh, in any process


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
    from framework_core.config.json_store import loads_bounded

    try:
        data = loads_bounded(path.read_bytes())
    except (OSError, ValueError):  # DamagedFile is a ValueError
        return False
    return isinstance(data, dict) and data.get("server") == server


def _checked(data: Any) -> dict[str, Any]:
    """A token file's shape: an object naming its server and URL, whose parts are objects where present."""
    if not isinstance(data, dict) or not isinstance(data.get("server"), str) or not isinstance(data.get("url"), str):
        raise ValueError("no server and url")
    for key in ("tokens", "client_info", "auth_server"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise ValueError(f'"{key}" is not an object')
    if data.get("expires_at") is not None and not isinstance(data["expires_at"], (int, float)):
        raise ValueError('"expires_at" is not a number')
    return data


class TokenFile:
    """The SDK's `TokenStorage` over one file (or memory only, when `path` is None), read and written through
    `JsonStore`: saved under a lock, merging only the keys this process changed into what is on disk (so two
    LACAs signed in to one server keep each other's refreshed tokens), atomically, mode 0600; a damaged file is
    moved aside and said, and the server signs in again."""

    def __init__(self, path: Path | None, server: str, url: str) -> None:
        self.path = path
        self.data: dict[str, Any] = {"server": server, "url": url}
        self.problem: str | None = None  # why the tokens could not be saved, for the user
        self.fixed_client: Any = None  # a client registered in advance (oauth.client_id): used, never stored
        self.expected_redirect: str | None = None  # a stored registration for another callback is not reused
        if path is not None:
            self._load(path, url)

    def _store(self, path: Path) -> Any:
        from framework_core.config.json_store import JsonStore

        return JsonStore(path, what=f"sign-in file of MCP server {self.data['server']}", check=_checked,
                         empty=dict, lost=lambda _: "its saved sign-in; LACA signs in to the server again",
                         lock=path.parent.with_name(path.parent.name + ".lock"))  # one lock, beside the folder

    def _load(self, path: Path, url: str) -> None:
        store = self._store(path)
        try:
            data = store.read()
        except OSError as exc:
            self.problem = f"could not read {path} ({exc.strerror or exc}); signing in again"
            return
        if store.problems:
            self.problem = store.problems[-1]
        if data.get("url") == url:
            self.data.update(data)

    # ---- the SDK's TokenStorage -------------------------------------------------------------------
    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return _model(OAuthToken, self.data.get("tokens"))

    async def set_tokens(self, tokens: Any) -> None:
        self.data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self.data["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self.save(("tokens", "expires_at"))

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
        self.save(("client_info",))

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

    def save(self, keys: tuple[str, ...] | None = None) -> None:
        """Write the file atomically, readable by the user only, merged into what is on disk under the lock: of the
        keys another process may have changed meanwhile (CHANGED_BY), only `keys`, the ones this call changed
        (with None, everything this process knows)."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self._store(self.path).update() as data:
                if data.get("url") not in (None, self.data["url"]):
                    data.clear()  # another URL's file under this name: this server's sign-in replaces it
                data.update({k: v for k, v in self.data.items() if keys is None or k in keys or k not in CHANGED_BY})
                data.update(server=self.data["server"], url=self.data["url"])
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
