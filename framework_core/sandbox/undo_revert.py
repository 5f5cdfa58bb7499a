"""Putting undo records back: the conflict check against later edits, and the restore of one record.

The records reaching here were read and checked (`undo_records.py`): every path beneath the workspace, every
saved copy verified. The restore checks again, just before acting, that no folder between the workspace and
the path is now a symlink, and sets modes and times through descriptors opened without following symlinks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from framework_core.sandbox.nodes import NodeState, remove_tree, restore_node
from framework_core.sandbox.undo_records import EntryInfo, Identity, Record, Workspace
from framework_core.wording import plural


@dataclass(frozen=True)
class Conflict:
    path: str
    reason: str


@dataclass
class RevertResult:
    reverted: list[EntryInfo] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    restored: int = 0  # paths put back
    errors: list[str] = field(default_factory=list)
    refused: list[EntryInfo] = field(default_factory=list)  # damaged entries, set aside: nothing was touched

    def summary(self) -> str:
        if self.refused:
            return (f"Not undone: the undo record of `{self.refused[0].label[:80]}` is damaged; the workspace "
                    "was not touched.")
        if self.conflicts and not self.reverted:
            return (f"Not undone: {plural(len(self.conflicts), 'path')} changed since "
                    f"({', '.join(c.path for c in self.conflicts[:3])}{' …' if len(self.conflicts) > 3 else ''}).")
        if not self.reverted:
            return "Nothing to undo." if not self.errors else "Not undone."
        names = ", ".join(f"`{e.label}`" for e in self.reverted)
        text = f"Undone: {names} ({plural(self.restored, 'path')} restored)."
        return text + (f" {plural(len(self.errors), 'path')} could not be restored." if self.errors else "")


def check(loaded: list[tuple[EntryInfo, list[Record]]]) -> list[Conflict]:
    """Compare each path with the post-image its entry recorded, as it will be when the newer entries
    in this batch have been reverted (so a path touched by two of them is not a false conflict)."""
    sim: dict[str, NodeState] = {}
    by_folder: dict[str, dict[str, NodeState]] = {}  # the simulated paths, by the folder they are in
    conflicts: list[Conflict] = []
    for _info, records in loaded:
        for rec in reversed(records):
            current = sim.get(rec.path) or NodeState.of(rec.path)
            if rec.post is not None and not current.matches(rec.post):
                conflicts.append(Conflict(rec.path, _why(rec.post, current)))
            elif rec.post_children is not None and current.kind == "dir":
                extra = sorted(_children(rec.path, by_folder.get(rec.path, {})) - set(rec.post_children))
                if extra:
                    conflicts.append(Conflict(rec.path, "the folder has new entries since: " + ", ".join(extra[:5])))
            for s in rec.saved:
                full = os.path.join(rec.path, s.rel) if s.rel else rec.path
                sim[full] = s.state
                by_folder.setdefault(os.path.dirname(full), {})[os.path.basename(full)] = s.state
    return conflicts


def landed(records: list[Record]) -> int:
    """How many of an interrupted apply's paths are no longer what their pre-image recorded."""
    return sum(not NodeState.of(rec.path).matches(rec.saved[0].state) for rec in records)


def _children(path: str, simulated: dict[str, NodeState]) -> set[str]:
    """The names in folder `path` once the newer entries are reverted (`simulated`: name -> state there)."""
    names = set(os.listdir(path))
    for name, state in simulated.items():
        (names.discard if state.kind == "absent" else names.add)(name)
    return names


def _why(post: NodeState, now: NodeState) -> str:
    if now.kind == "absent":
        return "it was deleted since"
    if post.kind == "absent":
        return "it was created since"
    if now.kind != post.kind:
        return f"it is now a {now.kind} (was a {post.kind})"
    if now.mode != post.mode and now.kind != "symlink":
        return f"its mode changed since ({post.mode:o} → {now.mode:o})"
    return "it was modified since"


def restore(rec: Record, blobs: Path, verified: dict[str, Identity], workspace: Workspace | None,
            errors: list[str]) -> int:
    """Put one record's pre-image back; returns how many paths were restored."""
    root = rec.saved[0].state
    unsafe = workspace.unsafe_parent(rec.path) if workspace is not None else None
    if unsafe is not None:
        errors.append(f"{rec.path}: not restored, {unsafe} is now a symlink or not a folder (it would lead "
                      "outside the workspace); move it away and /undo again")
        return 0
    try:
        current = NodeState.of(rec.path)
        if root.kind == "dir" and not rec.whole and current.kind == "dir":
            set_dir_attrs(rec.path, root)
            return 1
        if current.kind != "absent":
            remove_tree(rec.path, frozenset(rec.keep))
        if root.kind != "absent":
            os.makedirs(os.path.dirname(rec.path), exist_ok=True)
        dirs: list[tuple[str, NodeState]] = []
        for s in rec.saved:
            full = os.path.join(rec.path, s.rel) if s.rel else rec.path
            restore_node(full, s.state, blobs / s.blob if s.blob else None,
                         expect=verified.get(s.blob) if s.blob else None)
            if s.state.kind == "dir":
                dirs.append((full, s.state))
        for full, state in reversed(dirs):  # after their contents, which change a folder's mtime
            set_dir_attrs(full, state)
        return len(rec.saved)
    except OSError as exc:
        errors.append(f"{rec.path}: {exc.strerror or exc}")
        return 0


def set_dir_attrs(path: str, state: NodeState) -> None:
    """A folder's mode and mtime, through a descriptor that refuses a symlink in its place."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        os.fchmod(fd, state.mode)
        os.utime(fd, ns=(state.mtime_ns, state.mtime_ns))
    finally:
        os.close(fd)
