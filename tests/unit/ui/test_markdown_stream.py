from __future__ import annotations

import io

from rich.console import Console

from framework_core.ui.markdown_stream import MarkdownStream
from tests.waiting import wait_until

DOC = """# Title

Some **bold** text and a list:

- one
- two

```python
def f():

    return 1
```

Last paragraph."""


def render(text: str, chunk: int, *, terminal: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=terminal, color_system=None)
    stream = MarkdownStream(console, refresh_per_second=1000)
    for i in range(0, len(text), chunk):
        stream.feed(text[i:i + chunk])
    stream.finish()
    return buf.getvalue()


def test_non_terminal_output_has_every_block_once() -> None:
    out = render(DOC, 3, terminal=False)
    assert out.count("Title") == 1 and out.count("Last paragraph.") == 1
    assert "bold" in out and "**" not in out
    assert "• one" in out and "• two" in out
    assert "return 1" in out and "def f():" in out


def test_blank_line_inside_code_fence_does_not_split_block() -> None:
    out = render(DOC, 2, terminal=False)
    code = out[out.index("def f():"):out.index("return 1")]
    assert "```" not in code  # rendered as one code block, fences consumed


def test_chunking_does_not_change_the_result() -> None:
    assert render(DOC, 1, terminal=False) == render(DOC, 50, terminal=False) == render(DOC, 10_000, terminal=False)


def test_terminal_mode_ends_with_final_text_and_abort_note() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    stream = MarkdownStream(console, refresh_per_second=1000)
    stream.feed("First block.\n\nSecond bl")
    stream.abort("[reply cut off]")
    out = buf.getvalue()
    assert "First block." in out and "Second bl" in out and "[reply cut off]" in out


def tty(text: str) -> str:
    """What the terminal receives: the tty's output processing (ONLCR) turns each newline into CR LF."""
    return text.replace("\n", "\r\n")


def screen_after_stream(text: str, chunk: int, *, live: bool = True, rows: int = 40, cols: int = 70) -> list[str]:
    """Stream through the live region into a terminal emulator; return what the screen shows at the end."""
    import pyte

    buf = io.StringIO()
    console = Console(file=buf, width=cols, height=rows, force_terminal=True, color_system="256")
    stream = MarkdownStream(console, live=live, refresh_per_second=1e9)  # repaint on every chunk
    screen = pyte.Screen(cols, rows)
    term = pyte.Stream(screen)
    for i in range(0, len(text), chunk):
        stream.feed(text[i:i + chunk])
        term.feed(tty(buf.getvalue()))
        buf.seek(0)
        buf.truncate()
    stream.finish()
    term.feed(tty(buf.getvalue()))
    assert not screen.cursor.hidden
    return [line.rstrip() for line in screen.display]


def test_live_region_leaves_exactly_the_final_rendering_on_screen() -> None:
    final = screen_after_stream(DOC, 10_000, live=False)
    assert "Title" in final[0] and any("return 1" in line for line in final)
    for chunk in (1, 3, 17):
        assert screen_after_stream(DOC, chunk) == final, chunk


def test_open_code_block_taller_than_the_screen_scrolls_once_into_scrollback() -> None:
    import pyte

    code = "\n".join(f"line {i}" for i in range(60))
    doc = f"Intro.\n\n```\n{code}\n```\n\nOutro."
    buf = io.StringIO()
    console = Console(file=buf, width=40, height=12, force_terminal=True, color_system="256")
    stream = MarkdownStream(console, refresh_per_second=1e9)
    screen = pyte.HistoryScreen(40, 12, history=500)
    term = pyte.Stream(screen)
    for i in range(0, len(doc), 5):
        stream.feed(doc[i:i + 5])
        term.feed(tty(buf.getvalue()))
        buf.seek(0)
        buf.truncate()
        assert screen.cursor.y < 12
    stream.finish()
    term.feed(tty(buf.getvalue()))
    history = ["".join(ch.data for ch in row.values()).rstrip() for row in screen.history.top]
    everything = history + [line.rstrip() for line in screen.display]
    for i in range(60):
        assert sum(1 for line in everything if line.strip() == f"line {i}") == 1, i
    assert [line for line in everything if line.strip()][-1].strip() == "Outro."


def test_text_before_a_pause_is_painted_within_one_tick() -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=60, height=20, force_terminal=True, color_system=None)
    stream = MarkdownStream(console, refresh_per_second=20)
    stream.feed("first ")  # painted at once
    stream.feed("then more before the model pauses")  # inside the throttle window
    assert "then more" not in buf.getvalue()
    assert wait_until(lambda: "then more" in buf.getvalue(), 2, interval=0.01)
    stream.finish()


class SlowTerminal(io.StringIO):
    """A terminal that takes 5 ms to take each write, like a slow SSH link."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        import time

        self.writes += 1
        time.sleep(0.005)
        return super().write(text)

    def isatty(self) -> bool:
        return True


def test_a_slow_terminal_gets_one_write_per_repaint_not_one_per_chunk() -> None:
    import time

    term = SlowTerminal()
    console = Console(file=term, width=80, height=30, force_terminal=True, color_system="256")
    stream = MarkdownStream(console, refresh_per_second=8)
    text = ("Some **words** in a paragraph.\n\n```python\nx = 1\n```\n\n" * 200)
    started = time.monotonic()
    for i in range(0, len(text), 4):
        stream.feed(text[i:i + 4])
        time.sleep(0.0002)  # chunks arrive over time, as from a network
    elapsed = time.monotonic() - started
    stream.finish()
    assert term.writes <= elapsed * 8 + 4  # 2,500 chunks, yet only a write per tick (plus the final one)
    import re

    assert re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", term.getvalue()).count("x = 1") >= 200


def test_after_a_resize_the_draft_is_erased_at_its_re_wrapped_height_leaving_no_copy() -> None:
    from framework_core.ui.markdown_stream import rows_after_resize

    assert rows_after_resize([60, 10, 0], 40) == 4 and rows_after_resize([60, 10], 80) == 2
    buf = io.StringIO()
    console = Console(file=buf, width=60, height=20, force_terminal=True, color_system=None)
    stream = MarkdownStream(console, refresh_per_second=1e9)
    stream.feed("Finished block.\n\nAn open paragraph long enough to wrap over two rows at forty columns wide")
    drawn = list(stream._region_cells)
    console.width = 40  # the user narrows the window: the terminal re-wraps the draft
    buf.seek(0)
    buf.truncate()
    stream.feed(" and more.")
    after_resize = buf.getvalue()
    rows = rows_after_resize(drawn, 40)
    assert rows > len(drawn)  # the narrower terminal shows the same draft on more rows
    assert after_resize.startswith(f"\r\x1b[{rows - 1}A\x1b[J") and "more." in after_resize
    buf.seek(0)
    buf.truncate()
    stream.feed(" Still more.")
    assert "\x1b[J" in buf.getvalue()  # at the new width, repaints erase their own draft again
    stream.finish()


FULL = """# Heading
[r]: https://ref.io

A paragraph with **bold**, `co*de*`, a [link](https://x.io/a_(b)) and a [reference][r].

Setext heading
--------------

1. first
2. second
   - nested
   - [x] task

   loose part of the second item

> quoted
continued lazily

| left | right |
|:-----|------:|
| *a*  | 1     |

```python
def f():

    return 1
```

    indented code

<div>raw html</div>

Last line."""


def stream_lines(text: str, chunk: int, width: int = 80) -> list[str]:
    """Non-terminal output when every chunk may repaint: blocks are split as early as they can be."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    stream = MarkdownStream(console, refresh_per_second=1e9)
    for i in range(0, len(text), chunk):
        stream.feed(text[i:i + chunk])
    stream.finish()
    return buf.getvalue().split("\n")


def test_the_stream_prints_what_the_renderer_renders_for_the_whole_reply() -> None:
    from framework_core.ui.markdown_render import MarkdownRenderer

    console = Console(file=io.StringIO(), width=80, color_system=None)
    whole = "\n".join(MarkdownRenderer(console).render(FULL, 80)) + "\n"
    assert "(https://ref.io)" in whole and "nested" in whole and "def f():" in whole
    for chunk in (1, 7, 10_000):
        assert "\n".join(stream_lines(FULL, chunk)) == whole, chunk


def test_a_setext_underline_arriving_later_makes_the_open_paragraph_a_heading() -> None:
    assert stream_lines("Title\n=====\n\nBody", 1) == ["Title", "", "Body", ""]


def test_a_list_stays_one_block_across_its_blank_lines() -> None:
    assert stream_lines("- a\n\n- b\n\n  more b\n\nAfter.", 1) == [
        " • a", "", " • b", "", "   more b", "", "After.", ""]


def test_a_definition_at_the_end_resolves_the_block_still_open() -> None:
    assert stream_lines("Intro.\n\nSee [the docs][1].\n\n[1]: https://d.io\n", 1) == [
        "Intro.", "", "See the docs (https://d.io).", ""]


def test_a_definition_after_a_printed_block_is_listed_at_the_end() -> None:
    assert stream_lines("See [the docs][1].\n\nNext.\n\n[1]: https://d.io\n", 1) == [
        "See [the docs][1].", "", "Next.", "", "[1]: https://d.io", ""]


def test_a_long_code_fence_then_text_is_split_into_its_blocks() -> None:
    code = "\n".join(f"x{i} = {i}" for i in range(300))
    out = stream_lines(f"```\n{code}\n```\nAfter the code.", 9)
    assert out[-2:] == ["After the code.", ""] and out.count("    x299 = 299") == 1 and "```" not in out


def test_live_region_with_every_kind_of_block_leaves_the_final_rendering() -> None:
    final = screen_after_stream(FULL, 10_000, live=False, rows=60, cols=80)
    assert any("def f():" in line for line in final) and any("Last line." in line for line in final)
    for chunk in (1, 13):
        assert screen_after_stream(FULL, chunk, rows=60, cols=80) == final, chunk


def _items(n: int, marker: str = "-", text: str = "item {i} with `code` and **bold**") -> str:
    return "".join(f"{marker} {text.format(i=i)}\n" for i in range(n))


LONG_LISTS = {
    "tight, then a paragraph": _items(300) + "\nAfter.\n",
    "loose only at its end": _items(120) + "\n- the blank line above makes the whole list loose\n",
    "ordered, then a bullet list": "".join(f"{i}) step {i}\n" for i in range(1, 130)) + "- another list\n",
    "a new marker starts a new list": _items(80) + _items(80, "*") + _items(3, "+"),
    "ended by a quote, a rule, a heading": _items(60) + "> quoted\n" + _items(60) + "***\n" + _items(60) + "# Head\n",
    "ended by a fence": _items(90) + "```\ncode\n```\n",
    "definitions inside and after it": (_items(70, text="see [the docs][d{i}]") + "- [d3]: https://three.io\n"
                                        + _items(40) + "\n[d60]: https://sixty.io\n"),
    "nested blocks and lazy lines": "".join(f"- item {i}\n  ```\n  code {i}\n  ```\n  - inner {i}\nlazy {i}\n"
                                            for i in range(60)),
    "tasks and numbers that grow": "".join(f"{i}. [{'x' if i % 3 else ' '}] task {i}\n" for i in range(1, 400)),
    "loose by an item's own blank line": _items(50) + "- two paragraphs\n\n  in one item\n" + _items(50),
    "loose where no paragraph shows it": "- ```\n  a\n  ```\n\n- ```\n  b\n  ```\n" + _items(50),
    "items that only hold code": "".join(f"- ```\n  code {i}\n  ```\n" for i in range(40)) + "\nEnd.\n",
}


def test_a_long_list_streamed_prints_what_the_renderer_renders_for_the_whole_reply() -> None:
    from framework_core.ui.markdown_render import MarkdownRenderer

    renderer = MarkdownRenderer(Console(file=io.StringIO(), width=80, color_system=None))
    for name, text in LONG_LISTS.items():
        whole = "\n".join(renderer.render(text, 80)) + "\n"
        for chunk in (1, 9, 400, 100_000):
            assert "\n".join(stream_lines(text, chunk)) == whole, (name, chunk)


def test_the_live_region_of_a_long_open_list_shows_its_bottom_as_it_will_print() -> None:
    import pyte

    from framework_core.ui.markdown_render import MarkdownRenderer

    for text in ("".join(f"1. step with `code` {i}\n" for i in range(120)), _items(60, "*"),
                 _items(40) + "\n" + _items(40)):  # numbered by position; tight; loose
        buf = io.StringIO()
        console = Console(file=buf, width=70, height=20, force_terminal=True, color_system=None)
        stream = MarkdownStream(console, refresh_per_second=1e9)
        screen = pyte.Screen(70, 20)
        term = pyte.Stream(screen)
        for i in range(0, len(text), 23):
            stream.feed(text[i:i + 23])
        term.feed(tty(buf.getvalue()))
        whole = MarkdownRenderer(Console(file=io.StringIO(), width=70, color_system=None)).render(text, 70)
        shown = [line.rstrip() for line in screen.display if line.strip()]
        assert shown == [line.rstrip() for line in whole if line.strip()][-len(shown):] and len(shown) >= 10, text[:20]
        stream.finish()
