"""The browser half of an OAuth sign-in: send the user to the authorization URL, take the answer back.

`CallbackListener` is a one-shot HTTP listener on 127.0.0.1 (a free port, or the configured one) that waits
for the browser's GET of `/callback?code=…&state=…` (or `error=…`), answers a short page saying the tab can
be closed, and stops. `open_browser` tries the system browser and fails quietly: where no graphical browser
can be expected (Linux without DISPLAY, WAYLAND_DISPLAY or BROWSER), it does not try, so no text browser
takes over the terminal.
"""

from __future__ import annotations

import asyncio
import html
import os
import socket
import sys
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/callback"
_PAGE = ("<!doctype html><meta charset=utf-8><title>LACA</title>"
         "<body style='font-family:sans-serif;margin:3em'><h2>{title}</h2><p>{text}</p></body>")


class SignInFailed(Exception):
    """A sign-in that did not complete; the message says why and what to do."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redirect_uri(port: int) -> str:
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


class CallbackListener:
    """Serves one sign-in answer on 127.0.0.1:`port`; `answer` resolves to the query's parameters."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answer: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError as exc:
            raise SignInFailed(f"cannot listen on 127.0.0.1:{self.port} for the browser's answer "
                               f"({exc.strerror or exc}); free that port or set oauth.callback_port") from None

    async def wait(self, timeout: float) -> dict[str, str]:
        try:
            return await asyncio.wait_for(asyncio.shield(self.answer), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            raise SignInFailed(f"no sign-in within {_duration(timeout)}") from None

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass  # the headers say nothing we need
            parts = line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
            if target is None or target.path != CALLBACK_PATH or self.answer.done():
                await _reply(writer, 404, "Not found", "This address only takes the answer of a LACA sign-in.")
                return
            params = {k: v[0] for k, v in parse_qs(target.query).items()}
            if "error" in params:
                await _reply(writer, 200, "Sign-in refused", "LACA was told the sign-in was refused. You can "
                             "close this tab.")
            else:
                await _reply(writer, 200, "Signed in", "LACA has the answer. You can close this tab.")
            self.answer.set_result(params)
        except (OSError, asyncio.TimeoutError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()


async def _reply(writer: asyncio.StreamWriter, status: int, title: str, text: str) -> None:
    body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
    reason = "OK" if status == 200 else "Not Found"
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()


def refusal(params: dict[str, str]) -> str | None:
    """Why the authorization server said no, from the callback's parameters; None when it said yes."""
    if "error" not in params:
        return None
    detail = params.get("error_description")
    return f"the sign-in was refused ({params['error']}{': ' + detail if detail else ''})"


def open_browser(url: str) -> bool:
    """Open `url` in the user's browser when one can be expected; never raises."""
    if urlsplit(url).scheme not in ("http", "https"):
        return False
    if sys.platform.startswith("linux") and not any(os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY",
                                                                                 "BROWSER")):
        return False
    try:
        import webbrowser

        return bool(webbrowser.open(url, new=2))
    except Exception:  # noqa: BLE001 - a browser that cannot start leaves the printed URL
        return False


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"
