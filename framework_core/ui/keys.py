"""Questions answered with a key and Enter, through prompt_toolkit, that typing cannot answer by accident.

An answer is a choice key (or its word: yes, no, always, …) typed on a clean line and confirmed with Enter.
A key that cannot begin an answer is never shown: it marks the line as typing, shows a hint, and the next
Enter only clears it. So a sentence typed at the question (`what is this?`, `read: .env`) does nothing but
show the hint, and no answer can come from a letter inside a word. Esc is a key alone, never part of a word.

Keys typed before a question appeared are discarded (kernel buffer flushed, prompt_toolkit typeahead cleared),
and keys arriving within `guard_s` after it appeared are ignored, so a stray key cannot answer it.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

DEFAULT_GUARD_S = float(os.environ.get("LACA_TYPEAHEAD_GUARD_S", "0.35"))
WORDS = {"yes": "y", "no": "n", "always": "a", "view": "v", "preview": "p"}


def flush_terminal_input() -> None:
    try:
        import termios

        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError):
        pass


def answer_hint(choices: str, *, esc: bool = False) -> str:
    """`Type y, n or a, then Enter`: what answers the question (typing anything else does not)."""
    keys = [c for c in choices]
    listed = keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + " or " + keys[-1]
    return f"Typing here does not answer: type {listed}, then Enter" + (" · Esc stops the turn" if esc else "")


@dataclass
class ChoiceLine:
    """The state of one question: which answers exist and what was typed. No terminal in here (tested alone)."""

    choices: str
    default: str | None = None
    words: dict[str, str] = field(default_factory=lambda: dict(WORDS))
    text: str = ""
    dirty: bool = False  # a key that cannot begin an answer was typed: Enter only clears

    def answers(self) -> dict[str, str]:
        out = {c: c for c in self.choices}
        out.update({w: k for w, k in self.words.items() if k in self.choices})
        return out

    def type(self, char: str) -> bool:
        """A printable key. True when it was kept (it may begin an answer); False marks the line as typing."""
        candidate = (self.text + char).lower()
        if not self.dirty and any(a.startswith(candidate) for a in self.answers()):
            self.text += char
            return True
        self.dirty = True
        return False

    def backspace(self) -> None:
        if self.text:
            self.text = self.text[:-1]
        else:
            self.dirty = False

    def enter(self) -> str | None:
        """The answer, or None (the line is cleared; the caller shows the hint)."""
        typed, dirty = self.text.strip().lower(), self.dirty
        self.text, self.dirty = "", False
        if dirty:
            return None
        if not typed:
            return self.default
        return self.answers().get(typed)


def ask_key(message: Any, choices: str, *, default: str | None = None, guard_s: float = DEFAULT_GUARD_S,
            esc: str | None = None, actions: dict[str, Callable[[], None]] | None = None,
            words: dict[str, str] | None = None, hint: str | None = None,
            pt_input: Any = None, pt_output: Any = None) -> str:
    """Ask for one of `choices` (lower-case letters/digits), typed alone and confirmed with Enter; Enter alone
    gives `default` when set. `esc` is the answer Esc gives (else Esc gives the default, if any). A key in
    `actions` runs its function above the question (a pager), and the question stays. Ctrl-C raises
    KeyboardInterrupt; Ctrl-D gives the default (or `n`)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import run_in_terminal
    from prompt_toolkit.input.typeahead import clear_typeahead
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    line = ChoiceLine(choices, default, dict(WORDS) if words is None else words)
    shown_hint = [""]
    help_text = hint or answer_hint(choices, esc=esc is not None)
    opened = time.monotonic()
    kb = KeyBindings()

    def early() -> bool:
        return time.monotonic() - opened < guard_s

    def sync(event: Any) -> None:
        event.current_buffer.text = line.text
        event.current_buffer.cursor_position = len(line.text)

    @kb.add("enter")
    def _enter(event: Any) -> None:
        if early():
            return
        typed = line.text
        answer = line.enter()
        if answer is None:
            shown_hint[0] = help_text
            sync(event)
        elif actions and answer in actions:
            shown_hint[0] = ""
            sync(event)
            run_in_terminal(actions[answer])
        else:
            shown_hint[0] = ""
            event.current_buffer.text = typed or answer  # the answer stays on screen after the question
            event.app.exit(result=answer)

    @kb.add("<any>")
    def _key(event: Any) -> None:
        if early():
            return
        char = event.data
        if len(char) == 1 and char.isprintable():
            if not line.type(char):
                shown_hint[0] = help_text
            sync(event)

    @kb.add(Keys.BracketedPaste)
    def _paste(event: Any) -> None:
        if not early():
            line.dirty = True
            shown_hint[0] = help_text

    @kb.add("backspace")
    def _back(event: Any) -> None:
        line.backspace()
        sync(event)

    @kb.add("escape", eager=True)
    def _esc(event: Any) -> None:
        answer = esc if esc is not None else default
        if answer is not None and not early():
            event.app.exit(result=answer)

    @kb.add("c-c")
    def _interrupt(event: Any) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    @kb.add("c-d")
    def _eof(event: Any) -> None:
        event.app.exit(result=default or "n")

    def shown() -> Any:
        """The hint, when there is one, on its own line above the question (the question stays last)."""
        from prompt_toolkit.formatted_text import to_formatted_text

        base = to_formatted_text(message)
        return [("fg:ansiyellow", f"({shown_hint[0]})\n"), *base] if shown_hint[0] else base

    session: PromptSession[str] = PromptSession(key_bindings=kb, input=pt_input, output=pt_output)
    with paused_watcher():
        flush_terminal_input()  # once the watcher is paused: no other reader may be waiting on those keys
        if session.app.input is not None:
            clear_typeahead(session.app.input)
        opened = time.monotonic()
        return session.prompt(shown)


def ask_line(message: str, *, pt_input: Any = None, pt_output: Any = None) -> str:
    from prompt_toolkit import PromptSession

    session: PromptSession[str] = PromptSession(input=pt_input, output=pt_output)
    try:
        with paused_watcher():
            return session.prompt(message).strip()
    except EOFError:
        return ""


class EscWatcher:
    """While a turn runs, Esc stops it as Ctrl-C does; other keys typed meanwhile are kept for the next prompt.

    The terminal is put in non-canonical, no-echo mode (signals stay on, so Ctrl-C works as always) and a
    thread reads it. A lone ESC byte is Esc; one followed at once by more bytes is a key sequence (an arrow)
    and is kept with the other typing. Questions asked during the turn (approvals) pause the watcher, so that
    only one reader owns the terminal at a time.
    """

    active: "EscWatcher | None" = None

    def __init__(self, on_esc: Callable[[], None] | None = None) -> None:
        import threading

        self.on_esc = on_esc or _interrupt_main
        self.typed = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._paused = False
        self._fd: int | None = None
        self._saved: Any = None
        self._thread: Any = None

    def __enter__(self) -> "EscWatcher":
        import threading

        try:
            import termios

            if not sys.stdin.isatty():
                return self
            self._fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(self._fd)
        except (ImportError, OSError, ValueError):
            self._fd = None
            return self
        self._quiet()
        EscWatcher.active = self
        self._thread = threading.Thread(target=self._run, name="laca-esc", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        with self._lock:
            self._restore()
        EscWatcher.active = None

    def _quiet(self) -> None:
        import termios

        assert self._fd is not None
        mode = termios.tcgetattr(self._fd)
        mode[3] &= ~(termios.ICANON | termios.ECHO)
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self._fd, termios.TCSANOW, mode)

    def _restore(self) -> None:
        if self._fd is not None and self._saved is not None:
            import termios

            try:
                termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)
            except (OSError, termios.error):
                pass

    def pause(self) -> None:
        """Give the terminal back while a question is asked (what was typed before stays for the next prompt)."""
        with self._lock:
            self._paused = True
            self._restore()

    def resume(self) -> None:
        with self._lock:
            if self._paused and self._fd is not None and not self._stop.is_set():
                self._quiet()
            self._paused = False

    def _run(self) -> None:
        import select

        assert self._fd is not None
        while not self._stop.is_set():
            ready = select.select([self._fd], [], [], 0.05)[0]
            with self._lock:
                # Asked again under the lock: a question (which reads while we are paused) may have taken the
                # key since. A read with nothing to read would wait, holding the lock, for the next key, and
                # every question and the prompt after the turn with it.
                if (not ready or self._paused or self._stop.is_set()
                        or not select.select([self._fd], [], [], 0)[0]):
                    continue
                try:
                    data = os.read(self._fd, 256)
                    if not data:  # an end of file: select would report it readable forever, a busy loop
                        return
                    if data == b"\x1b" and not select.select([self._fd], [], [], 0.03)[0]:
                        self.on_esc()
                        continue
                except OSError:
                    return
                self.typed += data

    def take_text(self) -> tuple[list[str], str]:
        """What was typed meanwhile: the lines ended with Enter and the unfinished rest (all of it goes into the
        next prompt as a draft, never sent on its own). Control keys and sequences are left out."""
        import re

        with self._lock:
            typed, self.typed = bytes(self.typed), bytearray()
        text = re.sub(r"\x1b(\[[0-9;?]*[A-Za-z~]|O.|.)", "", typed.decode("utf-8", errors="ignore"))
        text = "".join(c for c in text.replace("\r", "\n") if c.isprintable() or c == "\n")
        *lines, rest = text.split("\n")
        return [line for line in lines if line.strip()], rest


def _interrupt_main() -> None:
    """Esc stops what runs the way Ctrl-C does: a SIGINT to this process."""
    import signal

    os.kill(os.getpid(), signal.SIGINT)


class paused_watcher:
    """Pause the Esc watcher (if a turn is running) while a question owns the terminal."""

    def __enter__(self) -> None:
        self.watcher = EscWatcher.active
        if self.watcher is not None:
            self.watcher.pause()

    def __exit__(self, *exc: object) -> None:
        if self.watcher is not None:
            self.watcher.resume()
