"""Reasoning is drawn dim and apart: the reply starts on a line of its own, in the normal style."""

from __future__ import annotations

import io

from rich.console import Console

from framework_core.core.events import AssistantMessageDone, AssistantReasoningDelta, AssistantTextDelta
from framework_core.lial_core import Message, Usage
from framework_core.ui.console import THEME
from framework_core.ui.render import EventRenderer


def test_reasoning_is_dim_italic_and_the_reply_starts_on_its_own_line() -> None:
    buf = io.StringIO()
    renderer = EventRenderer(Console(file=buf, width=80, force_terminal=True, color_system="standard", theme=THEME))
    for part in ("The user asks ", "for a sum."):
        renderer(AssistantReasoningDelta(part))
    renderer(AssistantTextDelta("It is 4.\n"))
    renderer(AssistantMessageDone(Message("assistant", "It is 4.\n"), Usage()))
    out = buf.getvalue()
    assert "\x1b[2;3mThe user asks " in out  # dim and italic (rich writes them in this order)
    reasoning_end = out.index("for a sum.") + len("for a sum.")
    assert "\n" in out[reasoning_end:out.index("It is 4.")]
    plain = [line for line in out.splitlines() if "It is 4." in line][0]
    assert "\x1b[2" not in plain.split("It is 4.")[0][-8:]  # the reply itself is not dim
