"""Code blocks for the Markdown renderer: highlighted by Pygments with the console's `code_theme`, on the
theme's background to the full width, long lines cut (code is never reflowed). Lexers and token styles are
cached, so a reply full of small code blocks costs little more than its text.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style

from framework_core.ui.markdown_inline import Painter, Span, width_of


class CodeRenderer:
    """Code lines to terminal lines for one console (`plain`: no colours at all, code is indented instead)."""

    def __init__(self, painter: Painter, *, plain: bool, code_theme: str) -> None:
        self.painter = painter
        self.plain = plain
        self.code_theme = code_theme
        self._theme: Any = None
        self._background = Style()
        self._token_styles: dict[Any, Style] = {}
        self._lexers: dict[str, Any] = {}

    def _lexer(self, language: str) -> Any:
        key = language.lower()
        if key not in self._lexers:
            from pygments.lexers import get_lexer_by_name
            from pygments.util import ClassNotFound

            try:
                self._lexers[key] = get_lexer_by_name(key, stripnl=False, ensurenl=False) if key else None
            except ClassNotFound:
                self._lexers[key] = None
        return self._lexers[key]

    def _token_style(self, token: Any) -> Style:
        style = self._token_styles.get(token)
        if style is None:
            style = self._token_styles[token] = self._theme.get_style_for_token(token)
        return style

    def render(self, body: list[str], language: str, width: int) -> list[str]:
        while body and not body[-1].strip():
            body.pop()
        if self.plain:
            return ["    " + line if line else "" for line in body] or [""]
        if self._theme is None:
            from rich.syntax import Syntax

            self._theme = Syntax.get_theme(self.code_theme)
            self._background = self._theme.get_background_style()
        rows = self._highlight(body, self._lexer(language))
        inner = max(width - 2, 1)
        pad_style = self._background
        out = [self.painter.line([(" " * width, pad_style)])]
        for row in rows:
            for piece in self._cut(row, inner):
                used = sum(width_of(text) for text, _ in piece)
                out.append(self.painter.line([(" ", pad_style)] + piece + [(" " * (width - 1 - used), pad_style)]))
        out.append(out[0])
        return out

    def _highlight(self, body: list[str], lexer: Any) -> list[list[Span]]:
        background = self._background
        if lexer is None:
            style = background + self._token_style(_text_token())
            return [[(line, style)] for line in body]
        rows: list[list[Span]] = [[]]
        for token, value in lexer.get_tokens("\n".join(body)):
            style = background + self._token_style(token)
            for k, part in enumerate(value.split("\n")):
                if k:
                    rows.append([])
                if part:
                    rows[-1].append((part, style))
        return rows[:len(body)] if body else []

    @staticmethod
    def _cut(row: list[Span], width: int) -> list[list[Span]]:
        """Hard-wrap one code line at `width` cells, keeping each piece's style (code is not reflowed)."""
        if sum(width_of(text) for text, _ in row) <= width:
            return [row]
        pieces: list[list[Span]] = [[]]
        used = 0
        for text, style in row:
            for ch in text:
                size = width_of(ch)
                if used + size > width:
                    pieces.append([])
                    used = 0
                if pieces[-1] and pieces[-1][-1][1] is style:
                    pieces[-1][-1] = (pieces[-1][-1][0] + ch, style)
                else:
                    pieces[-1].append((ch, style))
                used += size
        return pieces




def _text_token() -> Any:
    from pygments.token import Token

    return Token.Text
