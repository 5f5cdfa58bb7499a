"""A workspace text file as the edit tools see it: decoded so that it encodes back to the same bytes.

`editFile` and `applyPatch` change a few lines and keep everything else exactly: the encoding (UTF-8, with its
byte-order mark or without, or one the call names), the line endings (CRLF stays CRLF, a mixed file keeps each
line's own), the final newline, the mode. A binary file (a NUL byte, or bytes that are not text in the encoding)
and a file over `MAX_EDIT_BYTES` are refused with a message saying what to do instead. Pure apart from `load`,
which reads the file beneath the workspace (framework_core/tools/safe_open.py).
"""

from __future__ import annotations

import codecs
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from framework_core.errors import ToolError
from framework_core.wording import size_words

MAX_EDIT_BYTES = 10 * 1024 * 1024  # a larger file is edited with a command (sed, a script), not through the model
BOMS = ((codecs.BOM_UTF8, "utf-8"),)  # UTF-16 is not offered: readFile reads only ASCII-newline encodings


@dataclass(frozen=True)
class TextFile:
    """A file's text and how to write it back: `encode(text)` gives the same bytes for the same text."""

    text: str
    encoding: str
    bom: bytes = b""
    raw: bytes = b""  # the bytes read (for the digest and the undo pre-image)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def newline(self) -> str:
        """The file's line ending: CRLF when most of its lines end so, else LF."""
        crlf = self.text.count("\r\n")
        return "\r\n" if crlf and crlf >= self.text.count("\n") - crlf else "\n"

    def encode(self, text: str) -> bytes:
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise ToolError(f"the new text has {text[exc.start:exc.end]!r}, which {self.encoding} cannot hold; "
                            "the file keeps its encoding, so write that character another way") from None


def decode(raw: bytes, shown: str, encoding: str | None = None) -> TextFile:
    """The text of `raw`; ToolError for a binary file or bytes that are not text in the encoding."""
    refuse_size(len(raw), shown)
    bom, enc = b"", encoding
    if enc is None:
        bom, enc = next(((b, e) for b, e in BOMS if raw.startswith(b)), (b"", "utf-8"))
    body = raw[len(bom):]
    if b"\0" in body:
        raise ToolError(f"{shown} looks like a binary file (it holds NUL bytes); the edit tools change only text")
    try:
        text = body.decode(enc)
    except LookupError:
        raise ToolError(f"unknown encoding '{encoding}'") from None
    except UnicodeDecodeError as exc:
        hint = "; name its encoding with the `encoding` argument (e.g. latin-1)" if encoding is None else ""
        raise ToolError(f"{shown} is not {enc} text (byte {exc.start + len(bom):,} is {raw[exc.start + len(bom)]:#04x})"
                        f"{hint}") from None
    return TextFile(text, enc, bom, raw)


def refuse_size(size: int, shown: str) -> None:
    if size > MAX_EDIT_BYTES:
        raise ToolError(f"{shown} has {size_words(size)}, more than the edit tools take "
                        f"({size_words(MAX_EDIT_BYTES)}); change it with executeBashCommand (sed, a script)")


def load(workspace: Path, rel: str, shown: str, encoding: str | None = None) -> TextFile:
    """Read the regular file `rel` beneath the workspace (never through a symlink leading out)."""
    from framework_core.tools.safe_open import NotRegular, OutsideWorkspace, open_for_reading

    try:
        fd = open_for_reading(workspace, rel)
    except FileNotFoundError:
        raise ToolError(f"file not found: {shown}") from None
    except NotRegular as exc:
        raise ToolError(f"{shown} is {exc.what}; the edit tools change only regular files") from None
    except OutsideWorkspace:
        raise ToolError(f"{shown} leads outside the workspace (through a symlink); not changed") from None
    except OSError as exc:
        raise ToolError(f"could not read {shown}: {exc.strerror or exc}") from None
    try:
        size = os.fstat(fd).st_size
        refuse_size(size, shown)  # before reading it
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read()
    finally:
        os.close(fd)
    return decode(raw, shown, encoding)


def in_file_style(text: str, newline: str) -> str:
    """`text` (as the model wrote it, lines ending in LF or CRLF) with the file's line ending."""
    plain = text.replace("\r\n", "\n")
    return plain.replace("\n", newline) if newline != "\n" else plain


def keep_final_newline(before: str, after: str, newline: str) -> str:
    """The final newline kept: an edit at the end that drops it gets it back."""
    if before.endswith("\n") and after and not after.endswith("\n"):
        return after + newline
    return after
