"""The one bound on tool results: head and tail, the cut said in place, the whole text saved for paging."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from framework_core.tools.result_budget import DEFAULT_BUDGET, MIN_BUDGET, bound, budget_for_window, saver


def numbered(n: int, width: int = 40) -> str:
    return "".join(f"line {i:05d} " + "x" * width + "\n" for i in range(1, n + 1))


def test_text_within_the_budget_is_sent_whole() -> None:
    text = numbered(10)
    assert bound(text, 10_000).text == text


def test_text_within_the_budget_is_not_cut() -> None:
    assert not bound(numbered(10), 10_000).cut


def test_a_long_text_is_cut_to_the_budget() -> None:
    assert len(bound(numbered(5_000), 10_000).text) <= 10_000


def test_a_long_text_keeps_its_first_and_last_lines() -> None:
    out = bound(numbered(5_000), 10_000).text
    assert out.startswith("line 00001 ") and out.rstrip("\n").endswith("line 05000 " + "x" * 40)


def test_the_cut_is_made_at_line_ends() -> None:
    kept = [line for line in bound(numbered(5_000), 10_000).text.splitlines() if line.startswith("line ")]
    assert all(len(line) == len("line 00001 ") + 40 for line in kept)


def test_the_marker_counts_the_lines_and_bytes_left_out() -> None:
    text = numbered(5_000)
    result = bound(text, 10_000)
    shown = [line for line in result.text.splitlines() if line.startswith("line ")]
    assert (result.cut_lines, result.cut_bytes) == (5_000 - len(shown), len(text.encode()) - sum(len(s) + 1 for s in shown))


def test_the_marker_says_the_counts_in_place() -> None:
    result = bound(numbered(5_000), 10_000)
    assert f"[… {result.cut_lines:,} lines ({result.cut_bytes:,} bytes) left out: lines " in result.text


def test_the_whole_text_is_saved_and_the_marker_says_how_to_read_the_cut_part(tmp_path: Path) -> None:
    text = numbered(5_000)
    result = bound(text, 10_000, saver(tmp_path))
    hint = json.loads(re.search(r"Read them with readFile (\{.*?\})", result.text).group(1))
    path, start = hint["path"], hint["offset"]
    cut = "".join(Path(path).read_text().splitlines(keepends=True)[start - 1:start - 1 + hint["limit"]])
    assert result.saved_path == path and cut.encode() and len(cut.encode()) == result.cut_bytes


def test_the_saved_file_is_private(tmp_path: Path) -> None:
    result = bound(numbered(5_000), 10_000, saver(tmp_path / "session"))
    assert stat.S_IMODE(Path(result.saved_path).stat().st_mode) == 0o600


def test_a_text_without_newlines_is_cut_in_the_middle() -> None:
    result = bound("a" * 100_000 + "b" * 100_000, 10_000)
    assert result.text.startswith("a" * 4_000) and result.text.endswith("b" * 4_000) and len(result.text) <= 10_000


def test_without_a_saver_the_marker_says_the_rest_was_not_kept() -> None:
    assert "the full text was not kept" in bound(numbered(5_000), 10_000).text


def test_a_failing_saver_is_reported_in_the_marker() -> None:
    def full_disk(text: str) -> str:
        raise OSError(28, "No space left on device")

    assert "could not be saved (No space left on device)" in bound(numbered(5_000), 10_000, full_disk).text


def test_multibyte_text_counts_bytes_not_characters() -> None:
    text = "é" * 50_000
    result = bound(text, 10_000)
    assert result.cut_bytes == 2 * (50_000 - result.text.count("é"))


@pytest.mark.parametrize("window, expected", [(None, DEFAULT_BUDGET), (200_000, DEFAULT_BUDGET), (8_192, 3_276),
                                              (1_000, MIN_BUDGET)])
def test_budget_is_smaller_for_a_small_context_window(window: int | None, expected: int) -> None:
    assert budget_for_window(DEFAULT_BUDGET, window) == expected
