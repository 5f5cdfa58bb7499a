"""Build the session in the background while the prompt is already on screen.

The REPL shows its prompt after importing only prompt_toolkit and rich; config validation, the transcript,
the agent, MCP servers and the provider SDK load on a thread started just after the first render. A message
sent before that finishes simply waits for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from framework_core.core.approval import Approver
    from framework_core.core.events import EventSink
    from framework_core.core.facade import Facade
    from framework_core.core.options import StartOptions
    from framework_core.errors import MissingApiKeyError


@dataclass
class Started:
    """A session ready for a front end: the façade, and what to say before the first prompt (plain strings are
    warnings; a (text, style) pair is shown in that style, e.g. a resumed session's recap)."""

    facade: "Facade"
    notes: list[Any] = field(default_factory=list)


class Launcher(Protocol):
    """What a front end needs from the app layer, which builds everything (`app/startup.py` implements it)."""

    def start_session(self, opts: "StartOptions", *, events: "EventSink", approver: "Approver",
                      elicit: "Callable[[Any], Any] | None" = None, require_key: bool = True) -> Started:
        """Load the config, open or resume the session, build the agent and its façade."""
        ...

    def providers_to_ask(self, opts: "StartOptions") -> list[str]:
        """Several API keys set and none for the default provider: the ones to choose between (else empty)."""
        ...

    def onboard(self, opts: "StartOptions", error: "MissingApiKeyError", *, interactive: bool) -> bool:
        """Explain what to set for a missing key; True when the user picked a local server instead."""
        ...


class BootFailed(Exception):
    """The background start failed; `error` is the original exception."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class Boot:
    def __init__(self, opts: "StartOptions", build: Callable[["StartOptions"], Started]) -> None:
        self.opts = opts
        self._build = build
        self._done = threading.Event()
        self._result: Started | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def has_warnings(self) -> bool:
        return bool(self._result and self._result.notes)

    @property
    def failed(self) -> bool:
        return self._error is not None

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

    def result(self) -> Started:
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
