"""Single-key questions through prompt_toolkit, with a typeahead guard.

Keys typed before a question appeared are discarded (kernel buffer flushed, prompt_toolkit typeahead cleared),
and keys arriving within `guard_s` after it appeared are ignored, so a stray key cannot answer it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

DEFAULT_GUARD_S = float(os.environ.get("LACA_TYPEAHEAD_GUARD_S", "0.35"))


def flush_terminal_input() -> None:
    try:
        import termios

        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError):
        pass


def ask_key(message: str, choices: str, *, default: str | None = None, guard_s: float = DEFAULT_GUARD_S,
            pt_input: Any = None, pt_output: Any = None) -> str:
    """Ask for one of `choices` (lower-case letters/digits). Enter gives `default` when set. Ctrl-C raises."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.input.typeahead import clear_typeahead
    from prompt_toolkit.key_binding import KeyBindings

    flush_terminal_input()
    kb = KeyBindings()
    opened = time.monotonic()

    def accept(key: str):
        def handler(event: Any) -> None:
            if time.monotonic() - opened >= guard_s:
                event.app.exit(result=key)
        return handler

    for key in choices:
        kb.add(key)(accept(key))
        if key.isalpha():
            kb.add(key.upper())(accept(key))
    if default:
        kb.add("enter")(accept(default))
    else:
        kb.add("enter")(lambda event: None)

    @kb.add("<any>")
    def _ignore(event: Any) -> None:
        """Every other key does nothing."""

    @kb.add("c-c")
    def _interrupt(event: Any) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    @kb.add("c-d")
    def _eof(event: Any) -> None:
        event.app.exit(result=default or "n")

    session: PromptSession[str] = PromptSession(key_bindings=kb, input=pt_input, output=pt_output)
    if session.app.input is not None:
        clear_typeahead(session.app.input)
    answer = session.prompt(message)
    return answer


def ask_line(message: str, *, pt_input: Any = None, pt_output: Any = None) -> str:
    from prompt_toolkit import PromptSession

    session: PromptSession[str] = PromptSession(input=pt_input, output=pt_output)
    try:
        return session.prompt(message).strip()
    except EOFError:
        return ""
