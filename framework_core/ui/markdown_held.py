"""The finished items of a streamed list that is still open: their lines, and their rendering kept as it is made.

An item of a list ends where the next one starts (CommonMark), so the stream (`markdown_stream.py`) moves the
lines of every item but the last out of its open tail, and parses only from the last item on. Each item is
rendered once, when it ends, and the list's lines are put together from those renderings when the list ends:
the work per chunk follows the new text, not the length of the list.

What the items cannot know when they end is the list's tightness (a blank line between two later items makes
the whole list loose) and the reference definitions that come later. Tightness shows on the paragraphs directly
in the items (markdown-it hides them in a tight list); every parse that moved items out here saw the list's
tightness so far, and once loose it stays loose. When a parse showed no tightness (no such paragraph), a new
definition arrived after an item was rendered, or the width changed, the kept renderings are not used: the list
is parsed and rendered whole, once, as any other block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it.common.utils import normalizeReference
from markdown_it.token import Token

from framework_core.ui.markdown_render import ItemParts, MarkdownRenderer, list_tightness


@dataclass
class HeldList:
    kind: tuple[str, str]  # the list's opening token type and marker: the tail goes on with the same list
    number: int  # the next item's number (ordered lists)
    width: int  # the width the items were rendered at
    lines: list[str] = field(default_factory=list)  # the source lines of the finished items
    refs: dict[str, Any] = field(default_factory=dict)  # reference definitions in those lines
    labels: frozenset[str] = frozenset()  # the definitions known when the first item was rendered
    items: list[ItemParts] = field(default_factory=list)
    unresolved: list[tuple[str, str]] = field(default_factory=list)  # labels the items use and nothing defined
    loose: bool = False
    exact: bool = True  # the kept renderings still render the list as a whole parse would

    @classmethod
    def opened(cls, block: list[Token], env: dict[str, Any], width: int) -> "HeldList":
        head = block[0]
        number = int(head.attrs.get("start", 1)) if head.type == "ordered_list_open" else 0
        return cls((head.type, head.markup), number, width, labels=frozenset(env.get("references", {})))

    def continued_by(self, block: list[Token]) -> bool:
        """The tail, parsed from the last item on, reads as this list going on."""
        head = block[0]
        return (head.type, head.markup) == self.kind and head.map is not None and head.map[0] == 0

    def take(self, renderer: MarkdownRenderer, block: list[Token], env: dict[str, Any], count: int,
             width: int) -> None:
        """Render the first `count` items of the parsed `block` (they have ended) and note what the parse
        showed of the list."""
        self._observe(block, env, width)
        if count and self.exact:
            self.items += renderer.list_items(block, env, width, count, self.number)
            self.unresolved += unresolved_labels(block, env)
        self.number += count

    def finish(self, renderer: MarkdownRenderer, block: list[Token], env: dict[str, Any],
               width: int) -> list[str] | None:
        """The whole list's lines, the last items taken from the parsed `block`; None when the kept renderings
        cannot be used (see the module's docstring)."""
        self._observe(block, env, width)
        if not self.exact:
            return None
        items = self.items + renderer.list_items(block, env, width, -1, self.number)
        self.unresolved += unresolved_labels(block, env)
        return renderer.join_items(items, not self.loose)

    def _observe(self, block: list[Token], env: dict[str, Any], width: int) -> None:
        tight = list_tightness(block)
        self.loose = self.loose or tight is False
        if tight is None or width != self.width or not frozenset(env.get("references", {})) <= self.labels:
            self.exact = False
            self.items, self.unresolved = [], []


LABEL = re.compile(r"\[([^\[\]]{1,999})\]")  # what a link could use as a reference label


def unresolved_labels(block: list[Token], env: dict[str, Any]) -> list[tuple[str, str]]:
    """(normalised label, text) of each bracketed text in the block's inline content without a definition."""
    known = env.get("references", {})
    out = []
    for tok in block:
        if tok.type == "inline" and "[" in tok.content:
            for match in LABEL.finditer(tok.content):
                label = normalizeReference(match.group(1))
                if label and label not in known:
                    out.append((label, match.group(1)))
    return out
