"""Nothing untrusted (model text, briefs, commands, tool output) reaches the terminal as a control sequence."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from framework_core.core.approval import ApprovalRequest
from framework_core.core.events import ToolCallStarted, ToolOutputChunk
from framework_core.lial_core import ToolRequest
from framework_core.policy.levels import Level
from framework_core.tools.base import ActionPreview
from framework_core.ui.approval_view import approval_panel
from framework_core.ui.console import THEME, SafeConsole
from framework_core.ui.markdown_render import MarkdownRenderer
from framework_core.ui.render import EventRenderer
from framework_core.ui.safe_text import visible, visible_output_line, visible_reply

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;pwned\x07"
RLO = "\u202e"


def test_visible_shows_controls_and_keeps_text_tabs_and_newlines() -> None:
    assert visible("plain text") == "plain text"
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible(CLEAR) == "␛[2J"
    assert visible(TITLE) == "␛]0;pwned␇"
    assert visible("x\x08y\x7f\x9b") == "x␈y␡�"
    assert visible(f"rm -rf ~ {RLO}gpj.exe") == "rm -rf ~ ⟨U+202E⟩gpj.exe"
    assert visible("日本語 ✓") == "日本語 ✓"


def test_reply_line_endings_and_progress_bars() -> None:
    assert visible_reply("one\r\ntwo") == "one\ntwo"
    assert visible_output_line("10%\r50%\r100%") == "100%"
    assert visible_output_line("done\r") == "done"


def terminal(buf: io.StringIO) -> SafeConsole:
    return SafeConsole(file=buf, width=100, force_terminal=True, color_system="256", theme=THEME, highlight=False)


def test_approval_panel_shows_escape_sequences_in_brief_and_command() -> None:
    buf = io.StringIO()
    request = ToolRequest("r1", "executeBashCommand", {"command": f"curl x | sh {CLEAR}"},
                          icerc_full_text=f"Intent: harmless{TITLE}\nCommand: ls")
    preview = ActionPreview("Run command", f"curl x | sh {CLEAR}", None, [f"note {CLEAR}"])
    # A plain rich Console: the panel itself must already be safe, without the console's net.
    Console(file=buf, width=100, force_terminal=True, color_system="256", theme=THEME).print(
        approval_panel(ApprovalRequest(request, preview, Level.NEEDS_CONFIRM, [f"reason {CLEAR}"], "builtin")))
    out = buf.getvalue()
    assert CLEAR not in out and "\x1b]0;" not in out and "\x07" not in out
    assert out.count("␛[2J") == 3 and "␛]0;pwned␇" in out


def test_markdown_reply_cannot_drive_the_terminal() -> None:
    console = Console(file=io.StringIO(), width=60, force_terminal=True, color_system="256")
    lines = MarkdownRenderer(console).render(f"Hello {CLEAR}**bold**{TITLE}\n\n```\ncode {CLEAR}\n```", 60)
    joined = "\n".join(lines)
    assert CLEAR not in joined and "\x1b]" not in joined and "\x07" not in joined
    assert joined.count("␛[2J") == 2
    table = "\n".join(MarkdownRenderer(console).render(f"| a | b |\n|---|---|\n| x{CLEAR} | y{TITLE} |", 60))
    assert CLEAR not in table and "\x1b]0;" not in table and "␛[2J" in table  # tables go through rich


def test_tool_output_and_command_line_are_shown_not_obeyed() -> None:
    buf = io.StringIO()
    renderer = EventRenderer(terminal(buf))
    request = ToolRequest("r1", "executeBashCommand", {"command": f"cat evil {CLEAR}"})
    renderer(ToolCallStarted(request=request, title="Run command", body=f"cat evil {CLEAR}", auto_approved=True))
    renderer(ToolOutputChunk(request_id="r1", text=f"line {TITLE} one\nprogress 10%\rprogress 100%\n"))
    out = buf.getvalue()
    assert CLEAR not in out and "\x1b]0;" not in out and "\x07" not in out
    assert "␛[2J" in out and "␛]0;pwned␇ one" in out
    assert "progress 100%" in out and "10%" not in out


def test_safe_console_catches_what_was_missed() -> None:
    buf = io.StringIO()
    terminal(buf).print(Text(f"raw {CLEAR} text"), "and markup-free str " + TITLE)
    out = buf.getvalue()
    assert CLEAR not in out and "\x07" not in out and "\x1b]" not in out
    assert "raw ␛[2J text" in out and "␛]0;pwned" in out


def test_a_carriage_return_cannot_hide_text_in_output() -> None:
    from framework_core.ui.safe_text import visible_output_line

    assert visible_output_line("evil\rgood") == "evil␍good"
    assert visible_output_line("rm -rf ~ && curl x\rall done") == "rm -rf ~ && curl x␍all done"
    assert visible_output_line(" 10% [##   ]\r 50% [#####]\r100% [########]") == "100% [########]"
    assert visible_output_line("Downloading 1/3\rDownloading 3/3") == "Downloading 3/3"


def test_approval_panel_never_drops_a_reason_silently() -> None:
    buf = io.StringIO()
    request = ToolRequest("r1", "executeBashCommand", {"command": "x"}, icerc_full_text="Intent: x")
    reasons = [f"reason {i}" for i in range(11)]
    Console(file=buf, width=100, theme=THEME).print(
        approval_panel(ApprovalRequest(request, ActionPreview("Run command", "x"), Level.NEEDS_CONFIRM, reasons,
                                       "builtin")))
    out = buf.getvalue()
    assert "reason 0" in out and "reason 7" in out and "… and 3 more (v shows them all)" in out
