"""Streaming render cost: linear in length, close to printing the raw text."""

from __future__ import annotations

import io

from rich.console import Console

from benchmarks.common import Row, ratio_row, timed
from framework_core.ui.markdown_stream import MarkdownStream

PARA = ("Some text with **bold**, `code` and a [link](http://x). " * 3 + "\n\n"
        "- item one\n- item two\n\n```python\nprint('hello')\n```\n\n")


def reply(size: int) -> str:
    return (PARA * (size // len(PARA) + 1))[:size]


def one_block(size: int) -> str:
    """A reply that is a single long list: one block that stays open, and is repainted, until the end."""
    item = "- an item with `code` and **bold** words in it\n"
    return (item * (size // len(item) + 1))[:size]


def console() -> Console:
    return Console(file=io.StringIO(), width=100, force_terminal=True, color_system="truecolor")


def stream(text: str, chunk: int = 4, refresh: float = 8) -> float:
    c = console()

    def run() -> None:
        md = MarkdownStream(c, refresh_per_second=refresh)
        for i in range(0, len(text), chunk):
            md.feed(text[i:i + chunk])
        md.finish()
    return timed(run)


def raw(text: str, chunk: int = 4) -> float:
    c = console()

    def run() -> None:
        for i in range(0, len(text), chunk):
            c.file.write(text[i:i + chunk])
        c.print(text, markup=False, highlight=False)  # one plain rich print of the whole text
    return timed(run)


def measure() -> list[Row]:
    small, big = reply(20_000), reply(200_000)
    stream(small)  # warm caches
    t_small = min(stream(small) for _ in range(3))
    t_big = min(stream(big) for _ in range(2))
    t_raw = min(raw(big) for _ in range(2))
    # Repaint on every 400-character chunk: the open block is redrawn 500 times for 200 KB, 50 for 20 KB.
    t_block_small = min(stream(one_block(20_000), 400, 1e9) for _ in range(3))
    t_block_big = min(stream(one_block(200_000), 400, 1e9) for _ in range(2))
    return [ratio_row("render 200 KB vs 20 KB (4-char chunks)", t_big, t_small, 12.0,
                      note="baseline = the 20 KB reply; linear would be 10×"),
            ratio_row("render 200 KB vs printing it raw", t_big, t_raw, 3.0,
                      note="baseline = rich printing the same text unformatted"),
            ratio_row("one open 200 KB block vs 20 KB, repainted", t_block_big, t_block_small, 12.0,
                      note="a single long list redrawn every 400 chars; linear would be 10×")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
