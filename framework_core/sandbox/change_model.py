"""What an overlay's change set is: each change (what kind, what node, what the workspace had), the set with
what the gate kept back and what runs later, and how it reads (a summary line, a title naming paths, a
preview with diffs). Reading it is `change_read.py`; applying it is `changeset.py`."""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal

from framework_core.sandbox.nodes import NodeKind
from framework_core.sandbox.runs_later import by_folder
from framework_core.wording import plural

ChangeKind = Literal["created", "modified", "deleted", "replaced_dir", "mode_changed", "touched", "symlink"]
OPAQUE_XATTRS = ("user.overlay.opaque", "trusted.overlay.opaque")
UNSUPPORTED_XATTRS = ("user.overlay.redirect", "trusted.overlay.redirect")
ORIGIN_XATTRS = ("user.overlay.origin", "trusted.overlay.origin")
DIFF_FILE_LIMIT = 1 << 20  # larger files are named in the preview, not diffed


class ChangeSetError(Exception):
    """The upper directory holds something this reader does not understand; nothing was applied."""


@dataclass(frozen=True)
class Change:
    rel_path: str
    kind: ChangeKind
    node: NodeKind  # what the path is after the change (for a deletion: what it was)
    before: NodeKind = "absent"  # what the workspace had when the change set was read
    vanished: bool = False  # the command changed a file that was deleted from the workspace meanwhile


@dataclass
class ChangeSet:
    upper: Path
    workspace: Path
    changes: list[Change] = field(default_factory=list)  # what lands: data and runs-later, parents first
    protected: tuple[str, ...] = ()  # kept in place when a folder around them goes
    protected_attempts: list[Change] = field(default_factory=list)  # control: never applied
    placeholders: list[str] = field(default_factory=list)  # bubblewrap's mount points for missing control paths
    links: dict[int, str] = field(default_factory=dict)  # upper inode -> unchanged workspace file (hard links)
    control: dict[str, str] = field(default_factory=dict)  # control path -> what it would have done
    runs_later: dict[str, str] = field(default_factory=dict)  # lands; another tool runs it later: why
    implicit: dict[str, str] = field(default_factory=dict)  # of runs_later, what runs with no program named
    apply_bytes: int = 0  # bytes of the files applying copies (sparse files at their size)
    over_limit: str | None = None  # why nothing may be applied (sandbox.max_apply_bytes)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        """One line: what runs later first (named), then the counts, e.g. "3 files changed, 1 file created"."""
        counts = summarize(self.changes, self.protected_attempts)
        return f"{self.runs_later_line()}; {counts}" if self.runs_later else counts

    def runs_later_line(self) -> str:
        return "runs later: " + ", ".join(by_folder(self.runs_later, why=False))

    def title(self, limit: int = 6) -> str:
        """The paths, not only counts: what runs later, every path up to `limit`, what is not applied."""
        later = [self.runs_later_line()] if self.runs_later else []
        others = [c for c in self.changes if c.rel_path not in self.runs_later]
        rest = [c.rel_path for c in others]
        named = ", ".join(rest[:limit]) + (f" and {len(rest) - limit} more" if len(rest) > limit else "")
        parts = [*later, *([f"{summarize(others)}: {named}"] if named else [])]
        if self.control:
            parts.append("not applied: " + ", ".join(list(self.control)[:limit])
                         + (f" and {len(self.control) - limit} more" if len(self.control) > limit else ""))
        return " · ".join(parts) or "no files changed"

    def diff(self, max_lines: int = 400) -> str:
        """A preview of every change, with unified diffs of text files (binary and large files named). What
        runs later comes first and is never cut off; what is not applied is named with why, last."""
        lines: list[str] = []
        for c in self.changes:
            if c.rel_path in self.runs_later:
                label = "RUNS WITH NOTHING NAMED" if c.rel_path in self.implicit else "RUNS LATER"
                lines.append(f"{label} ({self.runs_later[c.rel_path]}): {c.rel_path}")
                lines += preview(c, self.upper / c.rel_path, self.workspace / c.rel_path)
        shown = len(lines)
        for c in self.changes:
            if c.rel_path not in self.runs_later:
                lines += preview(c, self.upper / c.rel_path, self.workspace / c.rel_path)
                if len(lines) - shown > max_lines:
                    break
        if len(lines) - shown > max_lines:
            lines = lines[:shown + max_lines] + [f"… {plural(len(lines) - shown - max_lines, 'more line')} not shown"]
        for c in self.protected_attempts:
            why = self.control.get(c.rel_path)
            lines.append(f"protected, not applied: {c.rel_path}" + (f" ({why})" if why else ""))
        return "\n".join(lines)

    def control_notes(self) -> list[str]:
        """Each control path the command touched, with what it would have done."""
        return [f"{c.rel_path}: {self.control.get(c.rel_path, 'a control path')}" for c in self.protected_attempts]


def summarize(changes: Iterable[Change], attempts: Iterable[Change] = ()) -> str:
    counts: dict[tuple[str, str], int] = {}
    for c in changes:
        replaced = c.kind == "replaced_dir" or (c.kind == "modified" and c.before != c.node)
        node = c.before if replaced else c.node  # "1 folder replaced" when a file now stands there
        noun = "folder" if node == "dir" else "symlink" if node == "symlink" else "file"
        verb = "replaced" if replaced else {"modified": "changed", "mode_changed": "mode changed",
                                            "symlink": "created" if c.before == "absent" else "changed"
                                            }.get(c.kind, c.kind)
        counts[(noun, verb)] = counts.get((noun, verb), 0) + 1
    order = ["changed", "created", "deleted", "replaced", "mode changed", "touched"]
    parts = [f"mode changed on {plural(n, noun)}" if verb == "mode changed" else f"{plural(n, noun)} {verb}"
             for (noun, verb), n in sorted(counts.items(), key=lambda kv: (order.index(kv[0][1]), kv[0][0]))]
    blocked = len(list(attempts))
    if blocked:
        parts.append(f"{plural(blocked, 'protected path')} left unchanged")
    return ", ".join(parts) if parts else "no files changed"

# ---- preview ------------------------------------------------------------------------------------------
def preview(c: Change, new: Path, old: Path) -> list[str]:
    rel = c.rel_path
    if c.kind == "deleted":
        return [f"deleted {'folder ' if c.node == 'dir' else ''}{rel}"]
    if c.kind == "replaced_dir":
        return [f"replaced {'folder' if c.before == 'dir' else 'a ' + c.before + ' by a folder'}: {rel}"]
    if c.node == "dir":
        return [f"new folder {rel}"] if c.kind == "created" else [f"mode {_mode(old)} → {_mode(new)}: {rel}/"]
    if c.node == "symlink":
        return [f"symlink {rel} -> {os.readlink(new)}"]
    if c.kind == "mode_changed":
        return [f"mode {_mode(old)} → {_mode(new)}: {rel}"]
    if c.kind == "touched":
        return [f"touched (same contents) {rel}"]
    if c.node != "file":
        return [f"{c.kind} {c.node} {rel}"]
    return _text_diff(rel, old if c.before == "file" else None, new)


def _text_diff(rel: str, old: Path | None, new: Path) -> list[str]:
    size = new.stat().st_size
    verb = "created" if old is None else "changed"
    if size > DIFF_FILE_LIMIT or (old is not None and old.stat().st_size > DIFF_FILE_LIMIT):
        return [f"{verb} {rel} ({plural(size, 'byte')}, too large to show)"]
    try:
        after = new.read_bytes().decode()
        before = old.read_bytes().decode() if old is not None else ""
    except UnicodeDecodeError:
        return [f"binary file {verb}: {rel} ({plural(size, 'byte')})"]
    if "\0" in after or "\0" in before:
        return [f"binary file {verb}: {rel} ({plural(size, 'byte')})"]
    head = "/dev/null" if old is None else f"a/{rel}"
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), head, f"b/{rel}", lineterm=""))
    return lines or [f"{verb} {rel} (no text difference)"]


def _mode(path: Path) -> str:
    return f"{stat.S_IMODE(os.lstat(path).st_mode):o}"
