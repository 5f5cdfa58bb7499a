"""The one bound on tool results: head and tail, the cut said in place, the whole text saved for paging."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from framework_core.tools.result_budget import (DEFAULT_BUDGET, MIN_BUDGET, RangeError, bound, bound_file, bound_pieces,
                                                budget_for_window, saver)
from framework_core.tools.runner import shares


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
    shown_bytes = sum(len(s) + 1 for s in shown)
    assert (result.cut_lines, result.cut_bytes) == (5_000 - len(shown), len(text.encode()) - shown_bytes)


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


# ---- files: read in pieces, numbered as the file numbers its lines ------------------------------------

def test_a_file_within_the_budget_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "f").write_text(numbered(10))
    result = bound_file(tmp_path / "f", 10_000)
    assert (result.text, result.total_lines, result.cut) == (numbered(10), 10, False)


def test_a_long_file_is_cut_as_the_same_text_in_memory_would_be(tmp_path: Path) -> None:
    (tmp_path / "f").write_text(numbered(5_000))
    from_file = bound_file(tmp_path / "f", 10_000, shown_path="f")
    in_memory = bound(numbered(5_000), 10_000, path="f")
    assert from_file.text == in_memory.text and (from_file.cut_lines, from_file.cut_bytes) == (
        in_memory.cut_lines, in_memory.cut_bytes)


def test_a_range_of_lines_is_numbered_as_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text(numbered(5_000))
    result = bound_file(tmp_path / "f", 10_000, offset=1_001, limit=3)
    assert result.text.splitlines() == [f"line {i:05d} " + "x" * 40 for i in (1_001, 1_002, 1_003)]
    assert result.total_lines == 5_000


def test_a_long_range_names_its_cut_lines_by_their_number_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text(numbered(5_000))
    result = bound_file(tmp_path / "f", 2_000, offset=2_001, limit=1_000)
    hint = json.loads(re.search(r"readFile (\{.*?\})", result.text).group(1))
    kept = [int(line[5:10]) for line in result.text.splitlines() if line.startswith("line ")]
    head = [k for k in kept if k < hint["offset"]]
    assert kept[0] == 2_001 and kept[-1] == 3_000 and "of 5,000" in result.text
    assert hint["offset"] == head[-1] + 1 and hint["offset"] + hint["limit"] == kept[len(head)]


def test_a_file_without_a_final_newline_counts_its_last_line(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\nb\nc")
    assert bound_file(tmp_path / "f", 100).total_lines == 3
    assert bound_file(tmp_path / "f", 100, offset=3).text == "c"


def test_an_offset_past_the_end_is_refused_with_the_file_length(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\nb\n")
    with pytest.raises(RangeError, match=r"offset 3 is past the end of the file \(2 lines\)"):
        bound_file(tmp_path / "f", 100, offset=3)


def test_an_empty_file_is_empty(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"")
    assert (bound_file(tmp_path / "f", 100).text, bound_file(tmp_path / "f", 100).total_lines) == ("", 0)


def test_lines_across_read_chunks_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from framework_core.tools import result_budget

    monkeypatch.setattr(result_budget, "CHUNK", 7)  # lines straddle every chunk boundary
    (tmp_path / "f").write_text(numbered(300, width=3))
    result = bound_file(tmp_path / "f", 10_000, offset=123, limit=2)
    assert result.text == "line 00123 xxx\nline 00124 xxx\n" and result.total_lines == 300


# ---- what a capture kept when the whole could not be saved -------------------------------------------

def test_pieces_of_an_unsaved_output_say_what_is_missing() -> None:
    result = bound_pieces(b"a\n" * 3000, b"z\n" * 3000, 1_000_000, 4_000, note="not saved: the disk is full")
    assert result.text.startswith("a\n") and result.text.endswith("z\n") and len(result.text) <= 4_000
    assert "bytes left out; not saved: the disk is full" in result.text and result.cut_bytes > 990_000


def test_streams_share_the_budget_the_small_one_whole() -> None:
    assert shares([300, 50_000], 10_000) == [300, 9_700]
    assert shares([50_000, 50_000], 10_000) == [5_000, 5_000]
    assert shares([0, 0], 10_000) == [0, 0]


def test_the_middle_of_one_long_line_is_not_offered_as_a_range() -> None:
    """Reading it by lines would show the same two ends again: the marker says so instead."""
    result = bound("{" + "x" * 100_000 + "}", 10_000, path="/saved")
    assert "cannot be read in parts" in result.text and "readFile" not in result.text


def test_any_result_is_bounded_once_as_the_model_reads_it(tmp_path) -> None:
    from framework_core.lial_core import ToolResult
    from framework_core.tools.result_budget import bound_result, saver

    huge = ToolResult("c1", "mcp__s__t", "error", {"error_message": "HEAD " + "e" * 200_000 + " TAIL"})
    cut = bound_result(huge, 10_000, saver(tmp_path, "t"))
    text = cut.to_model_text()
    assert len(text) <= 11_000 and "HEAD" in text and "TAIL" in text and "left out" in text
    assert any(p.read_text().endswith(" TAIL") for p in tmp_path.iterdir())  # the whole is kept for paging
    small = ToolResult("c2", "readFile", "success", {"content": "short"})
    assert bound_result(small, 10_000, None) is small
