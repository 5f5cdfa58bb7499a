"""Untrusted text made safe to show: nothing the model, a tool or a file says can drive the terminal.

An escape sequence in a reply or in command output could clear the screen, retitle the window, write
the clipboard, or hide part of the command shown for approval. Control characters are shown as their
Unicode control pictures (ESC as ␛) instead, and bidirectional overrides, which can reorder what a
command looks like ("Trojan Source"), are named rather than obeyed.
"""

from __future__ import annotations

_TABLE: dict[int, str | None] = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
_TABLE[0x7F] = "␡"
_TABLE.update({code: "�" for code in range(0x80, 0xA0)})
_TABLE.update({code: f"⟨U+{code:04X}⟩" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def visible(text: str) -> str:
    """`text` with every control character made visible; tabs and newlines stay as they are."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_TABLE)


def visible_reply(text: str) -> str:
    """Model text: a CR means nothing in Markdown (it comes from Windows line endings), so it goes quietly."""
    return visible(text.replace("\r", ""))


def visible_output_line(line: str) -> str:
    """One line of command output. A progress bar's CRs keep its last state; CRs that would overwrite other
    text are shown as ␍ with every part, so output cannot hide a line behind a carriage return."""
    if "\r" in line:
        parts = [part for part in line.split("\r") if part]
        if len({_skeleton(p) for p in parts}) <= 1:
            return visible(parts[-1] if parts else "")
        return "␍".join(visible(p) for p in parts)
    return visible(line)


_PROGRESS = str.maketrans("", "", "0123456789%#=>-.|/\\:[](){} _*+█▏▎▍▌▋▊▉░▒▓━╸╺─")


def _skeleton(part: str) -> str:
    """What is left of a progress line without its numbers and bar characters (the same on every redraw)."""
    return part.translate(_PROGRESS).strip()
