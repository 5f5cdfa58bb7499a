"""The Esc watcher and the questions asked during a turn share the terminal: a question reads while the watcher is
paused. A key the question took must not leave the watcher waiting to read, holding its lock: the next question
(or the prompt after the turn) would wait for the user's next key, and that key would go to the watcher."""

from __future__ import annotations

import os
import pty
import select
import sys
import threading
from typing import Iterator

import pytest

from framework_core.ui.keys import EscWatcher

QUESTIONS = 50


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """A real pseudo-terminal as stdin: (the keyboard's end, the program's end)."""
    keyboard, program = pty.openpty()
    monkeypatch.setattr(sys, "stdin", os.fdopen(program, "rb", buffering=0))
    yield keyboard, program
    os.close(keyboard)


def test_questions_one_after_another_each_get_the_terminal_at_once(terminal: tuple[int, int]) -> None:
    keyboard, program = terminal
    watcher = EscWatcher(on_esc=lambda: None)
    waited_at = None
    with watcher:
        for n in range(QUESTIONS):
            watcher.pause()  # a question is asked: it reads its answer itself
            os.write(keyboard, b"y\r")
            select.select([program], [], [])
            os.read(program, 16)
            watcher.resume()  # answered; the next question comes at once
            asking = threading.Thread(target=watcher.pause, daemon=True)
            asking.start()
            asking.join(2.0)
            if asking.is_alive():
                waited_at = n
                os.write(keyboard, b"x")  # the key the user would have had to press
                asking.join()
                break
            watcher.resume()
    assert (waited_at, bytes(watcher.typed)) == (None, b"")



def end_turn(watcher: EscWatcher, ended: threading.Event) -> None:
    watcher.__exit__(None, None, None)
    ended.set()


def test_the_turn_ends_at_once_after_a_question_took_its_key(terminal: tuple[int, int]) -> None:
    """The prompt after the turn waits for the watcher to stop: it must not wait for a key."""
    keyboard, program = terminal
    waited_at = None
    for n in range(QUESTIONS // 5):  # turns of one question each
        watcher = EscWatcher(on_esc=lambda: None)
        ended = threading.Event()
        watcher.__enter__()
        watcher.pause()
        os.write(keyboard, b"y\r")
        select.select([program], [], [])
        os.read(program, 16)
        watcher.resume()
        ending = threading.Thread(target=end_turn, args=(watcher, ended), daemon=True)
        ending.start()
        ending.join(3.0)  # the watcher's thread is given one second to stop
        if not ended.is_set():
            waited_at = n
            os.write(keyboard, b"x")
            ending.join()
            break
    assert waited_at is None
