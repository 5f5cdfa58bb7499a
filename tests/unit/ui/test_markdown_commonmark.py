"""CommonMark (and GFM tables, strikethrough, task lists) as models write it, rendered to terminal text."""

from __future__ import annotations

import io
import re

from rich.cells import cell_len
from rich.console import Console

from framework_core.ui.markdown_render import MarkdownRenderer

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def plain(text: str, width: int = 60) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    return MarkdownRenderer(console).render(text, width)


def coloured(text: str, width: int = 60) -> list[str]:
    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system="256")
    return MarkdownRenderer(console).render(text, width)


def codes_before(line: str, word: str) -> set[str]:
    """The SGR parameters in force where `word` starts (each span is painted as codes, text, reset)."""
    match = re.search(r"\x1b\[([0-9;]*)m" + re.escape(word), line)
    assert match is not None, (line, word)
    return set(match.group(1).split(";"))


def test_a_link_address_may_hold_parentheses() -> None:
    assert plain("see [Foo](https://en.wikipedia.org/wiki/Foo_(bar)).", 200) == [
        "see Foo (https://en.wikipedia.org/wiki/Foo_(bar))."]


def test_reference_links_take_their_address_from_the_definitions_which_show_nothing() -> None:
    text = "Read [the guide][1], [Docs][] and [docs].\n\n[1]: https://one.io/g\n[docs]: <https://d.io> \"Docs\""
    assert plain(text, 200) == ["Read the guide (https://one.io/g), Docs (https://d.io) and docs (https://d.io)."]


def test_an_undefined_reference_stays_as_written() -> None:
    assert plain("an [a][nowhere] link", 200) == ["an [a][nowhere] link"]


def test_autolinks_show_the_address_and_bare_addresses_stay_text() -> None:
    assert plain("<https://y.io/a> and https://z.io and <file:///tmp/x>", 200) == [
        "https://y.io/a and https://z.io and file:///tmp/x"]


def test_an_image_shows_its_description_and_address() -> None:
    assert plain("![a diagram](https://i.io/d.png)") == ["a diagram (https://i.io/d.png)"]


def test_triple_stars_are_bold_and_italic_at_once() -> None:
    [line] = coloured("***both*** then plain")
    assert SGR.sub("", line) == "both then plain"
    assert {"1", "3"} <= codes_before(line, "both")


def test_italic_nested_in_bold_keeps_the_bold() -> None:
    [line] = coloured("**bold _italic_ tail**")
    assert SGR.sub("", line) == "bold italic tail"
    assert {"1", "3"} <= codes_before(line, "italic") and "3" not in codes_before(line, "bold")


def test_strikethrough() -> None:
    [line] = coloured("~~gone~~ kept")
    assert SGR.sub("", line) == "gone kept" and "9" in codes_before(line, "gone")


def test_inline_code_keeps_stars_and_underscores() -> None:
    assert plain("`a*b*c` and `**not bold**` and `__init__`", 200) == ["a*b*c and **not bold** and __init__"]


def test_escapes_and_entities_become_their_characters() -> None:
    assert plain(r"\*not em\* &amp; &copy; \_x\_") == ["*not em* & © _x_"]


def test_ordered_lists_count_from_their_start() -> None:
    assert plain("3. three\n4. four") == [" 3. three", " 4. four"]
    assert plain("1. one\n1. two\n1. three") == [" 1. one", " 2. two", " 3. three"]


def test_nested_lists_indent_under_their_item() -> None:
    out = plain("- fruit\n  - apple\n    1. seed\n- veg")
    assert out == [" • fruit", "    • apple", "       1. seed", " • veg"]


def test_task_list_items_show_boxes() -> None:
    assert plain("- [x] done\n- [ ] open\n- [y] not a task") == [" • ☑ done", " • ☐ open", " • [y] not a task"]


def test_a_loose_list_keeps_a_blank_line_between_items() -> None:
    assert plain("- a\n\n- b\n\n  more b\n\nAfter.") == [" • a", "", " • b", "", "   more b", "", "After."]


def test_block_quotes_nest_and_hold_other_blocks() -> None:
    assert plain("> a\n>\n> > b\n>\n> - item") == ["▌ a", "▌ ", "▌ ▌ b", "▌ ", "▌  • item"]


def test_fenced_code_is_highlighted_and_keeps_its_spacing() -> None:
    out = coloured("~~~python\nx  =  'a b'   # note\n~~~", 40)
    assert SGR.sub("", out[1]).strip() == "x  =  'a b'   # note"
    assert len({m for m in SGR.findall(out[1]) if m}) > 2  # several token colours, not one style


def test_code_is_not_reflowed_to_the_width() -> None:
    line = "call(alpha, beta, gamma, delta, epsilon)"
    assert plain(f"```\n{line}\n```", 20) == ["    " + line]
    assert plain(f"    {line}", 20) == ["    " + line]


def test_indented_code_keeps_markdown_literal() -> None:
    assert plain("Text.\n\n    **not bold** [x](y)") == ["Text.", "", "    **not bold** [x](y)"]


def test_headings_of_every_kind_and_their_inline_markup() -> None:
    assert plain("# One *a*\n## Two\n###### Six\nSetext\n------") == ["One a", "", "Two", "", "Six", "", "Setext"]
    out = coloured("# Title")
    assert SGR.sub("", out[0]) == "Title" and out[0] != "Title"


def test_thematic_breaks_fill_the_width() -> None:
    assert plain("---\n***\n_ _ _", 12) == ["─" * 12, "", "─" * 12, "", "─" * 12]


def test_table_columns_follow_their_alignment() -> None:
    out = plain("| Left | Mid | Right |\n|:-----|:---:|------:|\n| a | b | 1 |\n| longer | c | 22 |")
    assert [line.rstrip() for line in out] == [
        " Left    Mid  Right",
        " ──────────────────",
        " a        b       1",
        " longer   c      22",
    ]


def test_table_cells_take_inline_markup() -> None:
    out = coloured("| name | note |\n|---|---|\n| **bold** | `code` and [l](http://u) |", 80)
    body = out[-1]
    assert SGR.sub("", body).split() == ["bold", "code", "and", "l", "(http://u)"]
    assert "1" in codes_before(body, "bold")
    assert "|" not in "".join(SGR.sub("", line) for line in out)


def test_html_is_shown_as_text() -> None:
    assert plain("<div>\n*x*\n</div>\n\na <b>bold</b> c") == ["<div>", "*x*", "</div>", "", "a <b>bold</b> c"]


def test_decoded_entities_and_addresses_cannot_be_control_characters() -> None:
    [line] = plain("a&#x202e;b [l](http://x.io/&#13;)", 200)
    assert "\u202e" not in line and "\r" not in line
    assert line == "a⟨U+202E⟩b l (http://x.io/␍)"


def test_wrapping_counts_cells_in_every_block() -> None:
    text = "- " + "日本語 " * 15 + "\n\n> " + "wörd " * 20 + "\n\n| a |\n|---|\n| " + "x " * 40 + "|"
    assert all(cell_len(SGR.sub("", line)) <= 30 for line in plain(text, 30))
