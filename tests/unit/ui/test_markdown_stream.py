from __future__ import annotations

import io

from rich.console import Console

from framework_core.ui.markdown_stream import MarkdownStream

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
