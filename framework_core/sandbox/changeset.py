"""The change set of a command run on an overlay of the workspace: read it, preview it, apply it.

The command saw the workspace as usual, but every change landed in the overlay's upper directory: new and
modified files as files (modes and mtimes kept), deletions as character devices 0:0 (whiteouts), a folder
removed and re-created (or a file replaced by a folder) as a folder marked opaque by the extended attribute
`user.overlay.opaque` (`trusted.overlay.opaque` outside a user namespace), symlinks as symlinks. Folders the
command only changed something inside are copied up as plain folders. Bubblewrap's mount points for
missing control paths also land there, as empty files or folders: they are never applied.

`apply` saves each touched path's pre-image in an undo entry before anything changes, refuses (unless
forced) when a target changed in the real workspace after the command started, and then makes the
workspace what the command would have made it (files by rename from the upper directory; only data: see
`land.py`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from framework_core.sandbox.change_model import (DIFF_FILE_LIMIT, OPAQUE_XATTRS, ORIGIN_XATTRS,  # noqa: F401
                                                  UNSUPPORTED_XATTRS, Change, ChangeKind, ChangeSet, ChangeSetError,
                                                  summarize)
from framework_core.sandbox.land import Applier
from framework_core.sandbox.nodes import NodeState
from framework_core.sandbox.undo_store import Conflict, UndoEntry, UndoError
from framework_core.wording import plural


# ---- reading (sandbox/change_read.py) ----------------------------------------------------------------
def read_changes(upper: Path, workspace: Path, *, protected: Iterable[str] = (), mounted: Iterable[str] = (),
                 max_bytes: int = 0, reasons: dict[str, str] | None = None) -> ChangeSet:
    """Walk the upper directory of an overlay of `workspace` and judge each change; see `change_read.py`."""
    from framework_core.sandbox.change_read import read_changes as read

    return read(upper, workspace, protected=protected, mounted=mounted, max_bytes=max_bytes, reasons=reasons)


# ---- applying -----------------------------------------------------------------------------------------
@dataclass
class ApplyResult:
    applied: bool
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)  # paths changed in the workspace meanwhile
    protected: list[Change] = field(default_factory=list)
    skipped: list[Change] = field(default_factory=list)  # FIFOs, sockets and devices: never re-created
    refused: dict[str, str] = field(default_factory=dict)  # their paths -> what each is ("a FIFO")
    stripped: list[str] = field(default_factory=list)  # landed without their setuid/setgid/sticky bits
    error: str | None = None
    notice: str | None = None  # from the undo store: older entries pruned

    def summary(self) -> str:
        if self.conflicts and not self.applied:
            names = ", ".join(c.path for c in self.conflicts[:3]) + (" …" if len(self.conflicts) > 3 else "")
            return (f"Not applied: {plural(len(self.conflicts), 'path')} changed in the workspace while the "
                    f"command ran ({names}); nothing was changed")
        text = summarize(self.changes, self.protected)
        if self.error:
            text += f"; stopped: {self.error}"
        return text

    def notes(self) -> list[str]:
        """What did not land as the command made it: refused nodes, dropped permission bits."""
        out = []
        if self.refused:
            named = ", ".join(f"{p} ({what})" for p, what in list(self.refused.items())[:5])
            more = f" and {len(self.refused) - 5} more" if len(self.refused) > 5 else ""
            out.append(f"not applied: {named}{more}: only files, folders and symlinks land in the workspace")
        if self.stripped:
            more = f" and {len(self.stripped) - 5} more" if len(self.stripped) > 5 else ""
            out.append(f"applied without their setuid, setgid or sticky bits: {', '.join(self.stripped[:5])}{more}")
        return out


def apply(changes: ChangeSet, upper: Path, workspace: Path, store_entry: UndoEntry | None, *,
          started_ns: int, force: bool = False) -> ApplyResult:
    """Make the workspace what the command made its overlay. `started_ns` is `time.time_ns()` taken
    before the command started: a target that changed after it is a conflict, and then nothing is
    applied unless `force`. Each touched path's pre-image goes into `store_entry` first."""
    upper, workspace = Path(upper), Path(workspace)
    result = ApplyResult(False, protected=list(changes.protected_attempts))
    keep = frozenset(str(workspace / p) for p in changes.protected)
    result.conflicts = find_conflicts(changes, workspace, started_ns)
    if (result.conflicts and not force) or not changes:
        if store_entry is not None:
            store_entry.discard()
        result.applied = not changes
        return result
    try:
        fresh = _save_preimages(changes, workspace, store_entry, keep)
    except UndoError as exc:
        if store_entry is not None:  # raised only with an entry
            store_entry.discard()
        result.error = str(exc)
        return result
    landing = Applier(str(upper), str(workspace), keep, changes.links, fresh).run(changes.changes)
    result.changes = [changes.changes[i] for i in landing.landed]
    result.skipped = [changes.changes[i] for i in landing.refused]
    result.refused = {changes.changes[i].rel_path: what for i, what in landing.refused.items()}
    result.stripped, result.error = landing.stripped, landing.error
    result.applied = True
    if store_entry is not None:
        result.notice = store_entry.commit()
    return result


def find_conflicts(cs: ChangeSet, workspace: Path, started_ns: int) -> list[Conflict]:
    """Targets that changed in the workspace after the command started (or since the set was read)."""
    out: list[Conflict] = []
    removed: set[str] = set()
    folders: dict[str, bool] = {"": os.path.isdir(workspace) and not os.path.islink(workspace)}
    for c in cs.changes:
        if _below(c.rel_path, removed):
            continue  # inside a folder that goes away: checked with that folder
        bad = _broken_parent(workspace, os.path.dirname(c.rel_path), folders)
        if bad is not None:
            out.append(Conflict(c.rel_path, f"its folder {bad or '.'} was removed or replaced meanwhile"))
            continue
        full = workspace / c.rel_path
        try:
            st: os.stat_result | None = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        now = NodeState.from_stat(st, full).kind if st else "absent"
        if c.vanished and now == "absent" and _changed_since(full.parent, started_ns):
            out.append(Conflict(c.rel_path, "it was deleted or moved while the command ran"))
        elif now != c.before:
            out.append(Conflict(c.rel_path, "it appeared while the command ran" if c.before == "absent"
                                else "it was deleted meanwhile" if now == "absent" else f"it is now a {now}"))
        elif st is not None and max(st.st_mtime_ns, st.st_ctime_ns) > started_ns:
            out.append(Conflict(c.rel_path, "it changed while the command ran"))
        elif now == "dir" and (c.kind in ("deleted", "replaced_dir") or c.node != "dir"):
            out += _subtree_conflicts(full, c.rel_path, started_ns)
        if c.kind in ("deleted", "replaced_dir") or (c.node == "dir" and c.kind == "created"):
            removed.add(c.rel_path)
    return out


def _below(rel: str, folders: set[str]) -> bool:
    """`rel` is inside one of `folders` (walking up its parents: linear in the change set, not quadratic)."""
    parent = os.path.dirname(rel)
    while parent:
        if parent in folders:
            return True
        parent = os.path.dirname(parent)
    return False


def _broken_parent(workspace: Path, rel: str, folders: dict[str, bool]) -> str | None:
    """The first folder on the way to `rel` that is no longer a real folder (a symlink would lead the
    writes elsewhere), or None. `folders` caches the answers; walked top down without recursion."""
    todo: list[str] = []
    cur = rel
    while cur not in folders:
        todo.append(cur)
        cur = os.path.dirname(cur)
    if not folders[cur]:
        return cur
    for item in reversed(todo):
        folders[item] = NodeState.of(workspace / item).kind == "dir"
        if not folders[item]:
            return item
    return None


def _changed_since(folder: Path, started_ns: int) -> bool:
    """The workspace folder changed (an entry was added, removed or renamed) after the command started."""
    try:
        st = os.lstat(folder)
    except OSError:
        return True
    return max(st.st_mtime_ns, st.st_ctime_ns) > started_ns


def _subtree_conflicts(top: Path, rel_top: str, started_ns: int) -> list[Conflict]:
    out: list[Conflict] = []
    stack = [(str(top), rel_top)]
    while stack:
        full, rel = stack.pop()
        with os.scandir(full) as it:
            for e in it:
                st = e.stat(follow_symlinks=False)
                if max(st.st_mtime_ns, st.st_ctime_ns) > started_ns:
                    out.append(Conflict(f"{rel}/{e.name}", "it changed while the command ran"))
                if stat.S_ISDIR(st.st_mode):
                    stack.append((e.path, f"{rel}/{e.name}"))
    return out


def _save_preimages(cs: ChangeSet, workspace: Path, entry: UndoEntry | None, keep: frozenset[str]) -> set[str]:
    """Save every target's pre-image; returns the folders that will be new (nothing to save inside)."""
    fresh: set[str] = set()
    ws = str(workspace)
    for c in cs.changes:
        parent = os.path.dirname(c.rel_path)
        if c.node == "dir" and c.kind in ("created", "replaced_dir"):
            fresh.add(c.rel_path)
        if entry is None:
            continue
        if parent in fresh:
            entry.save_absent(f"{ws}/{c.rel_path}")
        else:
            whole = c.kind in ("deleted", "replaced_dir") or c.node != "dir"
            entry.save_preimage(f"{ws}/{c.rel_path}", whole=whole, keep=keep, link=True)
    if entry is not None:
        entry.prepare()
    return fresh
