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

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Literal

from framework_core.sandbox.land import Applier
from framework_core.sandbox.nodes import NodeKind, NodeState
from framework_core.sandbox.undo_store import Conflict, UndoEntry, UndoError
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
    changes: list[Change] = field(default_factory=list)
    protected: tuple[str, ...] = ()
    protected_attempts: list[Change] = field(default_factory=list)  # under a control path: never applied
    placeholders: list[str] = field(default_factory=list)  # bubblewrap's mount points for missing control paths
    links: dict[int, str] = field(default_factory=dict)  # upper inode -> unchanged workspace file (hard links)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        """One line, e.g. "3 files changed, 1 folder deleted, 1 file created"."""
        return summarize(self.changes, self.protected_attempts)

    def diff(self, max_lines: int = 400) -> str:
        """A preview of every change, with unified diffs of text files (binary and large files named)."""
        lines: list[str] = []
        for c in self.changes:
            lines += _preview(c, self.upper / c.rel_path, self.workspace / c.rel_path)
            if len(lines) > max_lines:
                break
        for c in self.protected_attempts:
            lines.append(f"protected, not applied: {c.rel_path}")
        if len(lines) > max_lines:
            lines = lines[:max_lines] + [f"… {plural(len(lines) - max_lines, 'more line')} not shown"]
        return "\n".join(lines)


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


# ---- reading ------------------------------------------------------------------------------------------
def read_changes(upper: Path, workspace: Path, *, protected: Iterable[str] = ()) -> ChangeSet:
    """Walk the upper directory of an overlay of `workspace`; `protected` are relative control paths."""
    prot = tuple(sorted({p.strip("/") for p in protected if p.strip("/")}))
    cs = ChangeSet(Path(upper), Path(workspace), protected=prot)
    _scan(cs, str(upper), "", fresh=False)
    return cs


def _scan(cs: ChangeSet, upper_dir: str, rel_dir: str, *, fresh: bool) -> None:
    """`fresh`: the workspace has nothing under this folder that survives (it is new, or opaque). Depth first,
    parents before their contents, without recursion (a tree 1,200 folders deep is read like a flat one)."""
    stack = [_listing(upper_dir, rel_dir, fresh)]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        entry, rel, fresh = item
        st = entry.stat(follow_symlinks=False)
        target = cs.workspace / rel
        before: NodeKind = "absent" if fresh else NodeState.of(target).kind
        if _under(rel, cs.protected):
            _note_protected(cs, rel, entry.path, st, before)
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
            change: Change | None = None if fresh else Change(rel, "deleted", before, before)
        elif stat.S_ISDIR(st.st_mode):
            stack.append(_listing(entry.path, rel, _scan_dir(cs, entry.path, rel, st, before)))
            continue
        else:
            change = _file_change(cs, entry.path, rel, st, before, fresh)
        if change is not None:
            cs.changes.append(change)
            if before == "dir" and (change.kind in ("deleted", "replaced_dir") or change.node != "dir"):
                _protected_below(cs, rel)


def _listing(upper_dir: str, rel_dir: str, fresh: bool) -> Iterator[tuple[os.DirEntry[str], str, bool]]:
    with os.scandir(upper_dir) as it:
        entries = sorted(it, key=lambda e: e.name)
    return ((e, f"{rel_dir}/{e.name}" if rel_dir else e.name, fresh) for e in entries)


def _scan_dir(cs: ChangeSet, path: str, rel: str, st: os.stat_result, before: NodeKind) -> bool:
    """Note a folder's own change; returns whether its contents are fresh (see `_scan`)."""
    names = os.listxattr(path, follow_symlinks=False)
    if any(x in names for x in UNSUPPORTED_XATTRS):
        raise ChangeSetError(f"{rel}: the overlay recorded a renamed folder (redirect_dir), which LACA cannot "
                             "apply; mount the overlay with redirect_dir off (bubblewrap's default)")
    opaque = any(x in names and os.getxattr(path, x, follow_symlinks=False) == b"y" for x in OPAQUE_XATTRS)
    change: Change | None = None
    if before == "absent":  # a folder copied up from the workspace that is gone now was moved away meanwhile
        change = Change(rel, "created", "dir", "absent", any(x in names for x in ORIGIN_XATTRS) and not opaque)
    elif opaque or before != "dir":
        change = Change(rel, "replaced_dir", "dir", before)
    elif stat.S_IMODE(st.st_mode) != NodeState.of(cs.workspace / rel).mode:
        change = Change(rel, "mode_changed", "dir", "dir")
    if change is not None:  # parents before their contents
        cs.changes.append(change)
        if change.kind == "replaced_dir" and before == "dir":
            _protected_below(cs, rel)
    return before == "absent" or opaque or before != "dir"


def _file_change(cs: ChangeSet, path: str, rel: str, st: os.stat_result, before: NodeKind,
                 fresh: bool) -> Change | None:
    node = NodeState.from_stat(st, path)
    if before == "absent":
        # copied up from the workspace (a hard link made by the command carries the origin too)
        vanished = not fresh and node.kind == "file" and st.st_nlink == 1 and _has_origin(path)
        return Change(rel, "symlink" if node.kind == "symlink" else "created", node.kind, "absent", vanished)
    old = NodeState.of(cs.workspace / rel)
    if node.kind == "symlink":
        if old.kind == "symlink" and old.target == node.target:
            return Change(rel, "touched", "symlink", before) if old.mtime_ns != node.mtime_ns else None
        return Change(rel, "symlink", "symlink", before)
    if node.kind != "file" or old.kind != "file":
        return Change(rel, "modified", node.kind, before)
    if old.size != node.size:
        return Change(rel, "modified", "file", "file")
    if old.mtime_ns != node.mtime_ns and not _same_bytes(path, cs.workspace / rel):
        return Change(rel, "modified", "file", "file")
    if old.mode != node.mode:
        return Change(rel, "mode_changed", "file", "file")
    if old.mtime_ns != node.mtime_ns:
        return Change(rel, "touched", "file", "file")
    if st.st_nlink > 1:  # copied up only to be linked to: the workspace file can be the link's source
        cs.links[st.st_ino] = rel
    return None


def _note_protected(cs: ChangeSet, rel: str, path: str, st: os.stat_result, before: NodeKind) -> None:
    empty = (stat.S_ISDIR(st.st_mode) and not os.listdir(path)) or (stat.S_ISREG(st.st_mode) and st.st_size == 0)
    if rel in cs.protected and before == "absent" and empty:
        cs.placeholders.append(rel)
        return
    node = NodeState.from_stat(st, path).kind
    whiteout = stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
    cs.protected_attempts.append(Change(rel, "deleted" if whiteout else "modified" if before != "absent"
                                        else "created", before if whiteout else node, before))


def _protected_below(cs: ChangeSet, rel: str) -> None:
    """Control paths inside a folder that goes away: they are kept, and reported."""
    for p in cs.protected:
        if p.startswith(rel + "/") and os.path.lexists(cs.workspace / p):
            kind = NodeState.of(cs.workspace / p).kind
            cs.protected_attempts.append(Change(p, "deleted", kind, kind))


def _under(rel: str, prefixes: tuple[str, ...]) -> bool:
    return any(rel == p or rel.startswith(p + "/") for p in prefixes)


def _has_origin(path: str) -> bool:
    for name in ORIGIN_XATTRS:
        try:
            os.getxattr(path, name, follow_symlinks=False)
            return True
        except OSError:
            continue
    return False


def _same_bytes(a: str | Path, b: str | Path) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 16), fb.read(1 << 16)
            if x != y:
                return False
            if not x:
                return True


# ---- preview ------------------------------------------------------------------------------------------
def _preview(c: Change, new: Path, old: Path) -> list[str]:
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
        if c.vanished:
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
    writes elsewhere), or None. `folders` caches the answers."""
    if rel not in folders:
        parent_bad = _broken_parent(workspace, os.path.dirname(rel), folders)
        if parent_bad is not None:
            return parent_bad
        folders[rel] = NodeState.of(workspace / rel).kind == "dir"
    return None if folders[rel] else rel


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
