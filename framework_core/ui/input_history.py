"""The REPL's input history (Up arrow, Ctrl-R) in the data dir, degrading to memory when the disk refuses it.

prompt_toolkit's FileHistory raises from `store_string` on every Enter once the disk is full or read-only;
this one keeps the history in memory from the first failure on and leaves one warning for the REPL to show.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from prompt_toolkit.history import FileHistory, History, InMemoryHistory


class SafeFileHistory(FileHistory):
    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.failed: str | None = None
        self.pending_warning: str | None = None  # shown once by the REPL, then cleared

    def load_history_strings(self) -> Iterable[str]:
        try:
            yield from list(super().load_history_strings())
        except OSError:
            return

    def store_string(self, string: str) -> None:
        if self.failed is not None:
            return
        try:
            super().store_string(string)
        except OSError as exc:
            self.failed = f"{exc.strerror or exc}"
            self.pending_warning = (f"Cannot write the input history {os.fsdecode(self.filename)} ({self.failed}); "
                                    "from now on "
                                    "it is kept in memory only.")

    def take_warning(self) -> str | None:
        warning, self.pending_warning = self.pending_warning, None
        return warning


def make_history(data_dir: Path) -> History:
    """A file history when the data dir can be written; otherwise memory (the session's own start-up warning
    already says that nothing is saved on this disk)."""
    path = data_dir / "input_history"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with open(path, "ab"):
            pass
    except OSError:
        return InMemoryHistory()
    return SafeFileHistory(str(path))
