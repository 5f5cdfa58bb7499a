"""Streaming render cost: linear in length, close to printing the raw text.

Cost here is the CPU time of this process (`time.process_time`, every thread), with the short and the long
runs interleaved and the least of several kept. The renderer only computes, so its CPU time is its cost; wall
time on a shared machine adds the time other processes hold the CPU, which a 1 s run always collects and a
0.03 s run often escapes, so a ratio of wall times grew with the machine's load (9× to 14× for the same code
within minutes at a load of 4).
"""

from __future__ import annotations

import io
import time
from typing import Callable

from rich.console import Console

from benchmarks.common import Row, ratio_row
from framework_core.ui.markdown_stream import MarkdownStream

PARA = ("Some text with **bold**, `code` and a [link](http://x). " * 3 + "\n\n"
        "- item one\n- item two\n\n```python\nprint('hello')\n```\n\n")


def reply(size: int) -> str:
    return (PARA * (size // len(PARA) + 1))[:size]


def one_block(size: int) -> str:
    """A reply that is a single long list: one block that stays open, and is repainted, until the end."""
    item = "- an item with `code` and **bold** words in it\n"
    return (item * (size // len(item) + 1))[:size]


def timed(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def least(*runs: Callable[[], float], rounds: int) -> list[float]:
    """Each run's least time over `rounds`, the runs interleaved so that a busy moment hits them alike."""
    best = [float("inf")] * len(runs)
    for _ in range(rounds):
        for k, run in enumerate(runs):
            best[k] = min(best[k], run())
    return best


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
    t_small, t_big, t_raw = least(lambda: stream(small), lambda: stream(big), lambda: raw(big), rounds=4)
    # Repaint on every 400-character chunk: the open block is redrawn 500 times for 200 KB, 50 for 20 KB.
    block_small, block_big = one_block(20_000), one_block(200_000)
    t_block_small, t_block_big = least(lambda: stream(block_small, 400, 1e9), lambda: stream(block_big, 400, 1e9),
                                       rounds=4)
    return [ratio_row("render 200 KB vs 20 KB (4-char chunks)", t_big, t_small, 12.0,
                      note="baseline = the 20 KB reply; linear would be 10×"),
            ratio_row("render 200 KB vs printing it raw", t_big, t_raw, 3.0,
                      note="baseline = rich printing the same text unformatted"),
            ratio_row("one open 200 KB block vs 20 KB, repainted", t_block_big, t_block_small, 12.0,
                      note="a single long list redrawn every 400 chars; linear would be 10×")]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
