"""The patch grammar and the context matcher, alone (pure)."""

from __future__ import annotations

import pytest

from framework_core.tools.patch_format import PatchError, parse
from framework_core.tools.patch_match import HunkMismatch, apply_hunks, join_lines, split_lines


def test_a_here_document_around_the_patch_is_taken_off_and_line_numbers_are_ignored() -> None:
    ops = parse("<<'EOF'\n*** Begin Patch\n*** Update File: a.py\n@@ -10,2 +10,2 @@\n-x\n+y\n*** End Patch\nEOF")
    assert [(o.action, o.path, o.hunks[0].context, o.hunks[0].ops) for o in ops] == \
        [("update", "a.py", None, (("-", "x"), ("+", "y")))]


@pytest.mark.parametrize("patch, words", [
    ("*** Update File: a\n", "starts with the line '*** Begin Patch'"),
    ("*** Begin Patch\n*** End Patch", "no file in it"),
    ("*** Begin Patch\n*** Update File: a\n*** End Patch", "has no hunk"),
    ("*** Begin Patch\n*** Update File: a\n@@\n-x\nbad line\n*** End Patch", "line 5 of the patch"),
    ("*** Begin Patch\n*** Delete File: a\n*** Delete File: a\n*** End Patch", "named twice"),
    ("*** Begin Patch\n*** Add File:\n+x\n*** End Patch", "needs a file path"),
])
def test_a_malformed_patch_names_the_line_and_the_problem(patch: str, words: str) -> None:
    with pytest.raises(PatchError) as err:
        parse(patch)
    assert words in str(err.value)


def hunks(body: str):
    return parse(f"*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch")[0].hunks


def test_hunks_apply_in_order_keeping_untouched_lines_byte_for_byte() -> None:
    lines = split_lines("a  \r\nb\r\nc\r\nd\r\nb\r\n")
    out, added, removed = apply_hunks(lines, hunks("@@\n a\n-b\n+B\n@@\n d\n-b\n+B2"), "\r\n")
    assert join_lines(out) == "a  \r\nB\r\nc\r\nd\r\nB2\r\n" and (added, removed) == (2, 2)


def test_end_of_file_hunk_and_a_file_without_a_final_newline() -> None:
    lines = split_lines("x\ny\nx\ny")
    out, _, _ = apply_hunks(lines, hunks("@@\n x\n-y\n+z\n*** End of File"), "\n")
    assert join_lines(out) == "x\ny\nx\nz"


def test_a_mismatch_says_how_far_the_hunk_matched() -> None:
    with pytest.raises(HunkMismatch) as err:
        apply_hunks(split_lines("one\ntwo\nthree\n"), hunks("@@\n one\n-too\n+2"), "\n")
    assert err.value.hunk == 1 and "its line 2 ('too')" in err.value.why and "line 2 is 'two'" in err.value.why
