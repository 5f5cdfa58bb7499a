"""The REPL prompt's keys, as the peers' users expect them.

Enter sends; Ctrl-J, Alt+Enter and a `\\` before Enter add a line; Ctrl-G edits the draft in $EDITOR and puts
it back (not sent); Shift-Tab cycles the modes; Ctrl-C clears a draft (or interrupts an empty prompt). A long
paste is shown as `[pasted 61 lines #1]` and sent whole. Esc never turns the next keys into Alt combinations:
a key pressed after Esc is its own key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from framework_core.ui.repl import Repl

PASTE_LINES = 10  # a paste of more lines than this is collapsed in the input box
PASTE_CHARS = 2000  # ... or of more characters
ESC_WAIT_S = 0.05  # Alt+key arrives as ESC and the key in one read; a person's Esc then a key never does


@dataclass
class Pastes:
    """Long pastes kept aside while their placeholder stands in the input box."""

    texts: dict[int, str] = field(default_factory=dict)

    def keep(self, text: str) -> str:
        n = len(self.texts) + 1
        self.texts[n] = text
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        return f"[pasted {lines} lines #{n}]"

    def expand(self, text: str) -> str:
        """The message with each placeholder still in it replaced by what was pasted."""
        def put_back(m: re.Match[str]) -> str:
            return self.texts.get(int(m.group(1)), m.group(0))

        out = re.sub(r"\[pasted \d+ lines #(\d+)\]", put_back, text)
        self.texts.clear()
        return out


def repl_bindings(repl: "Repl", pastes: Pastes) -> Any:
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    kb = KeyBindings()

    @kb.add("escape", "enter")
    @kb.add("c-j")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    ends_in_backslash = Condition(lambda: _before_cursor(repl).endswith("\\"))

    @kb.add("enter", filter=ends_in_backslash)
    def _continued(event: Any) -> None:
        """`\\` then Enter: a new line, as in a shell."""
        event.current_buffer.delete_before_cursor(1)
        event.current_buffer.insert_text("\n")

    @kb.add("c-g")
    def _editor(event: Any) -> None:
        """The draft in $VISUAL / $EDITOR; what the editor saves comes back into the box, not sent."""
        event.current_buffer.open_in_editor(validate_and_handle=False)

    @kb.add(Keys.BracketedPaste)
    def _paste(event: Any) -> None:
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")
        if text.count("\n") >= PASTE_LINES or len(text) > PASTE_CHARS:
            text = pastes.keep(text)
        event.current_buffer.insert_text(text)

    @kb.add("s-tab")
    def _next_mode(event: Any) -> None:
        """Shift-Tab cycles ask → accept edits → plan → auto (shown in the status line; the model is told)."""
        if repl.started is None:
            return  # still starting: nothing to switch yet
        repl.started.next_mode()
        event.app.invalidate()

    @kb.add("c-c")
    def _ctrl_c(event: Any) -> None:
        buf = event.current_buffer
        if buf.text:
            buf.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return kb


def _before_cursor(repl: "Repl") -> str:
    try:
        from prompt_toolkit.application import get_app

        return get_app().current_buffer.document.text_before_cursor
    except Exception:
        return ""


def quick_escape(app: Any) -> None:
    """Esc alone is Esc: do not wait a second for a key to combine it with (Alt+key comes in one read)."""
    app.timeoutlen = ESC_WAIT_S
    app.ttimeoutlen = ESC_WAIT_S
