from __future__ import annotations

import io
import re

from rich.cells import cell_len
from rich.console import Console

from framework_core.ui.markdown_render import MarkdownRenderer

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plain(text: str, width: int = 60) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    return MarkdownRenderer(console).render(text, width)


def coloured(text: str, width: int = 60, *, no_color: bool = False) -> list[str]:
    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system="256", no_color=no_color)
    return MarkdownRenderer(console).render(text, width)


def test_paragraph_wraps_to_width_and_keeps_every_word() -> None:
    text = " ".join(f"word{i}" for i in range(60))
    lines = plain(text, 40)
    assert len(lines) > 3
    assert all(cell_len(line) <= 40 for line in lines)
    assert " ".join(lines).split() == text.split()


def test_soft_breaks_join_and_hard_breaks_split() -> None:
    assert plain("one\ntwo") == ["one two"]
    assert plain("one  \ntwo") == ["one", "two"]
    assert plain("one\\\ntwo") == ["one", "two"]


def test_inline_markers_are_consumed_and_literals_kept() -> None:
    [line] = plain("a **bold** and *em* and `co*de*` and ~~gone~~ and snake_case_name and \\*lit\\*", 200)
    assert line == "a bold and em and co*de* and gone and snake_case_name and *lit*"
    assert plain("unclosed **bold and `tick", 200) == ["unclosed **bold and `tick"]


def test_links_show_their_address_once() -> None:
    [line] = plain("see [the docs](https://x.io/d) or <https://y.io> or [https://z.io](https://z.io)", 200)
    assert line == "see the docs (https://x.io/d) or https://y.io or https://z.io"


def test_headings_atx_and_setext() -> None:
    assert plain("# Title #\n## Sub") == ["Title", "", "Sub"]
    assert plain("Big\n===\n\nSmall\n-----") == ["Big", "", "Small"]


def test_lists_nested_ordered_and_tasks() -> None:
    out = plain("1. first\n2. second\n   - inner one\n   - inner two\n3. third\n\n- [x] done\n- [ ] open")
    assert out[:5] == [" 1. first", " 2. second", "     • inner one", "     • inner two", " 3. third"]
    assert out[-2:] == [" • ☑ done", " • ☐ open"]


def test_list_item_wraps_under_its_text_and_takes_lazy_lines() -> None:
    out = plain("- " + "alpha " * 12 + "\nlazy tail", 30)
    assert out[0].startswith(" • alpha")
    assert all(line.startswith("   ") for line in out[1:])
    assert out[-1].endswith("lazy tail")


def test_block_quote_and_rule() -> None:
    out = plain("> quoted **text**\ncontinues\n\n---", 20)
    assert out[0] == "▌ quoted text"
    assert out[1] == "▌ continues"
    assert out[-1] == "─" * 20


def test_plain_code_is_indented_verbatim() -> None:
    out = plain("```python\ndef f():\n\n    return '**x**'\n```")
    assert out == ["    def f():", "", "        return '**x**'"]


def test_coloured_code_is_highlighted_with_a_background_to_full_width() -> None:
    out = coloured("```python\ndef f():\n    return 1\n```", 30)
    assert len(out) == 4  # padding line, two code lines, padding line
    assert all(cell_len(ANSI.sub("", line)) == 30 for line in out)
    assert "48;5;" in out[1] and "38;5;" in out[1]  # background and token colours
    assert ANSI.sub("", out[1]).strip() == "def f():"


def test_long_code_lines_are_cut_not_lost() -> None:
    code = "x = '" + "a" * 70 + "'"
    out = coloured(f"```python\n{code}\n```", 30)
    visible = "".join(ANSI.sub("", line).strip() for line in out)
    assert visible == code
    assert all(cell_len(ANSI.sub("", line)) == 30 for line in out)


def test_unknown_language_and_indented_code() -> None:
    out = plain("```nosuchlang\nkeep   spacing\n```\n\n    indented code")
    assert out == ["    keep   spacing", "", "    indented code"]


def test_no_color_keeps_emphasis_but_drops_colours() -> None:
    out = coloured("**bold** and `code` and [l](http://u)\n\n```python\nx = 1\n```", no_color=True)
    joined = "\n".join(out)
    assert "\x1b[1m" in joined
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7])[;m]", joined)


def test_wide_characters_wrap_by_cells() -> None:
    lines = plain("日本語 " * 20, 21)
    assert all(cell_len(line) <= 21 for line in lines)
    assert sum(line.count("日本語") for line in lines) == 20


def test_tables_go_through_rich() -> None:
    out = plain("| name | value |\n|------|-------|\n| a    | 1     |")
    text = "\n".join(out)
    assert "name" in text and "value" in text and "|" not in text
    assert out[0].strip() and out[-1].strip()


def test_coloured_table_has_no_blank_padding_rows() -> None:
    out = coloured("| name | value |\n|------|-------|\n| a    | 1     |")
    assert ANSI.sub("", out[0]).strip() == "name  value"
    assert ANSI.sub("", out[-1]).strip() == "a     1"


def test_random_markdownish_input_never_raises_and_keeps_every_word() -> None:
    import random

    rng = random.Random(6)
    atoms = ["word", "**", "*", "_", "`", "```", "~~~", "#", "##", "- ", "1. ", "> ", "|", "---", "[a](b)", "<",
             "\\", "  ", "\n", "\n\n", "    ", "日本", "\t", "[", "]", "(", ")", "- [ ] ", "===", "\x1b"]
    for width in (1, 2, 7, 40):
        for _ in range(150):
            text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 40)))
            lines = plain(text, width)
            assert all(isinstance(line, str) for line in lines)
            coloured(text, max(width, 4))
            if "```" not in text and "~~~" not in text and "|" not in text and "\\" not in text:
                assert "".join(lines).count("word") == text.count("word"), repr(text)


def test_code_theme_changes_code_colours() -> None:
    console = Console(file=io.StringIO(), width=40, force_terminal=True, color_system="truecolor")
    doc = "```python\ndef f():\n    return 'x'\n```"
    dark = MarkdownRenderer(console, code_theme="monokai").render(doc, 40)
    light = MarkdownRenderer(console, code_theme="solarized-light").render(doc, 40)
    assert [ANSI.sub("", line) for line in dark] == [ANSI.sub("", line) for line in light]
    assert dark != light
