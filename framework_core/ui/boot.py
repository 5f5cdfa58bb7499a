"""Build the session in the background while the prompt is already on screen.

The REPL shows its prompt after importing only prompt_toolkit and rich; config validation, the transcript,
the agent, MCP servers and the provider SDK load on a thread started just after the first render. A message
sent before that finishes simply waits for it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from framework_core.config.load import LoadedConfig
    from framework_core.core.agent import Agent
    from framework_core.app.startup import StartOptions


class BootFailed(Exception):
    """The background start failed; `error` is the original exception."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class Boot:
    def __init__(self, opts: "StartOptions", build: Callable[["StartOptions"], tuple["LoadedConfig", "Agent", list[str]]]) -> None:
        self.opts = opts
        self._build = build
        self._done = threading.Event()
        self._result: tuple[LoadedConfig, Agent, list[str]] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def has_warnings(self) -> bool:
        return bool(self._result and self._result[2])

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self, on_done: Callable[[BaseException | None], None] | None = None) -> None:
        if self._thread is not None:
            return

        def work() -> None:
            try:
                self._result = self._build(self.opts)
            except BaseException as exc:  # noqa: BLE001 - reported to the REPL, never lost
                self._error = exc
            finally:
                self._done.set()
                if on_done is not None:
                    on_done(self._error)

        self._thread = threading.Thread(target=work, name="laca-boot", daemon=True)
        self._thread.start()

    def result(self) -> tuple["LoadedConfig", "Agent", list[str]]:
        self.start()
        self._done.wait()
        if self._error is not None:
            raise BootFailed(self._error)
        assert self._result is not None
        return self._result

    def restart(self) -> None:
        self._done.clear()
        self._result = self._error = None
        self._thread = None


def peek_persona(opts: "StartOptions") -> str:
    """The persona id for the first prompt, without validating the config (cheap)."""
    import os

    if opts.overrides.persona:
        return opts.overrides.persona
    if os.environ.get("LACA_PERSONA"):
        return os.environ["LACA_PERSONA"]
    persona = "forge"
    try:  # a line scan, not a YAML parse: this runs before the prompt, the real load validates later
        import re

        from framework_core.config.load import config_layers

        for _, path in config_layers(__import__("pathlib").Path.cwd(), opts.overrides):
            if path.is_file():
                m = re.search(r"^default_persona:\s*['\"]?([A-Za-z0-9_.-]+)", path.read_text(encoding="utf-8"), re.M)
                if m:
                    persona = m.group(1)
    except Exception:  # the real load reports config problems properly
        pass
    return persona
