"""The change set of a command run on an overlay of the workspace: read it, preview it, apply it.

The command saw the workspace as usual, but every change landed in the overlay's upper directory: new and
modified files as files (modes and mtimes kept), deletions as character devices 0:0 (whiteouts), a folder
removed and re-created (or a file replaced by a folder) as a folder marked opaque by the extended attribute
`user.overlay.opaque` (`trusted.overlay.opaque` outside a user namespace), symlinks as symlinks. Folders the
command only changed something inside are copied up as plain folders. Bubblewrap's mount points for
missing control paths also land there, as empty files or folders: they are never applied.

`apply` saves each touched path's pre-image in an undo entry before anything changes, refuses (unless
forced) when a target changed in the real workspace after the command started, and then makes the
workspace what the command would have made it.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Literal

from framework_core.sandbox.nodes import NodeKind, NodeState, remove_tree
from framework_core.sandbox.undo_store import Conflict, UndoEntry, UndoError
from framework_core.wording import plural

if TYPE_CHECKING:
    from framework_core.sandbox.gate import Gate

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
    apply_bytes: int = 0  # bytes of the files applying copies (sparse files at their size)
    over_limit: str | None = None  # why nothing may be applied (sandbox.max_apply_bytes)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        """One line: what runs later first (named), then the counts, e.g. "3 files changed, 1 file created"."""
        counts = summarize(self.changes, self.protected_attempts)
        return f"{self.runs_later_line()}; {counts}" if self.runs_later else counts

    def runs_later_line(self) -> str:
        return "runs later: " + ", ".join(self.runs_later)

    def title(self, limit: int = 6) -> str:
        """The paths, not only counts: what runs later, every path up to `limit`, what is not applied."""
        later = [f"runs later: {', '.join(self.runs_later)}"] if self.runs_later else []
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
                lines.append(f"RUNS LATER ({self.runs_later[c.rel_path]}): {c.rel_path}")
                lines += _preview(c, self.upper / c.rel_path, self.workspace / c.rel_path)
        shown = len(lines)
        for c in self.changes:
            if c.rel_path not in self.runs_later:
                lines += _preview(c, self.upper / c.rel_path, self.workspace / c.rel_path)
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


# ---- reading ------------------------------------------------------------------------------------------
def read_changes(upper: Path, workspace: Path, *, protected: Iterable[str] = (), mounted: Iterable[str] = (),
                 max_bytes: int = 0) -> ChangeSet:
    """Walk the upper directory of an overlay of `workspace` and judge each change (`gate.py`): data and what
    runs later land, control paths do not. `protected` are the user's control paths (sandbox.protected_paths),
    `mounted` the control paths bubblewrap bound read-only (an empty one of them that did not exist is a
    mount point, never applied). Over `max_bytes` (0: no bound) of files to copy, `over_limit` says so."""
    from framework_core.sandbox.gate import LACA_FILES, Gate
    from framework_core.sandbox.overlay_view import AfterTree

    user = tuple(sorted({p.strip("/") for p in protected if p.strip("/")}))
    prot = tuple(sorted({*user, *(p.strip("/") for p in mounted if p.strip("/")), *LACA_FILES}))
    cs = ChangeSet(Path(upper), Path(workspace), protected=prot)
    tree = AfterTree(Path(upper), Path(workspace))
    raw = _scan(cs, str(upper), tree.fresh)
    gate = Gate(tree, str(workspace), user)
    dropped: list[str] = []
    for change in raw:
        rel = change.rel_path
        inside = next((d for d in dropped if rel.startswith(d + "/")), None)
        judged = gate.judge(rel) if inside is None else None
        if judged is None or judged.verdict == "control":
            cs.control[rel] = judged.reason if judged is not None else f"inside {inside}, which is not applied"
            cs.protected_attempts.append(change)
            if change.node == "dir" and change.kind != "deleted":
                dropped.append(rel)
            continue
        if judged.verdict == "runs_later":
            cs.runs_later[rel] = judged.reason
        cs.changes.append(change)
        if change.node == "file" and change.kind != "deleted":
            cs.apply_bytes += os.lstat(cs.upper / rel).st_size
    _adopt(cs, gate, {c.rel_path for c in raw})
    if max_bytes and cs.apply_bytes > max_bytes:
        cs.over_limit = (f"not applied: {cs.apply_bytes:,} bytes, over the limit {max_bytes:,}; raise "
                         "sandbox.max_apply_bytes")
    return cs


def _adopt(cs: ChangeSet, gate: "Gate", changed: set[str]) -> None:
    """A folder the command made a repository (HEAD, objects/, refs/ added to it) adopts the files already
    there; when git would act on one of them, nothing of that repository lands."""
    from framework_core.sandbox.overlay_view import adopted_control

    for folder, judged in adopted_control(gate, cs.workspace, changed).items():
        why = f"it would make {folder or '.'} a git repository whose {judged.rel} git would act on ({judged.reason})"
        keep = []
        for c in cs.changes:
            if folder == "" or c.rel_path.startswith(folder + "/"):
                cs.control[c.rel_path] = why
                cs.runs_later.pop(c.rel_path, None)
                cs.protected_attempts.append(c)
                if c.node == "file" and c.kind != "deleted":
                    cs.apply_bytes -= os.lstat(cs.upper / c.rel_path).st_size
            else:
                keep.append(c)
        cs.changes = keep


def _scan(cs: ChangeSet, upper: str, fresh_dirs: set[str]) -> list[Change]:
    """Every change in the upper directory, parents before their contents, without recursion (a tree 1,200
    levels deep is walked like a flat one). Folders whose workspace contents do not survive go in
    `fresh_dirs`. Placeholders and control paths kept below a removed folder are noted in `cs`."""
    out: list[Change] = []
    stack: list[tuple[list[os.DirEntry[str]], str, bool]] = [(_entries(upper), "", False)]
    while stack:
        entries, rel_dir, fresh = stack[-1]
        if not entries:
            stack.pop()
            continue
        entry = entries.pop()
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        st = entry.stat(follow_symlinks=False)
        before: NodeKind = "absent" if fresh else NodeState.of(cs.workspace / rel).kind
        if rel in cs.protected and _placeholder(entry.path, st, before):
            cs.placeholders.append(rel)
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
            change: Change | None = None if fresh else Change(rel, "deleted", before, before)
        elif stat.S_ISDIR(st.st_mode):
            change, gone = _dir_change(cs, entry.path, rel, st, before)
            if gone:
                fresh_dirs.add(rel)
            if change is not None:
                out.append(change)
                if change.kind == "replaced_dir" and before == "dir":
                    _protected_below(cs, rel)
            stack.append((_entries(entry.path), rel, gone))
            continue
        else:
            change = _file_change(cs, entry.path, rel, st, before, fresh)
        if change is not None:
            out.append(change)
            if before == "dir" and (change.kind in ("deleted", "replaced_dir") or change.node != "dir"):
                _protected_below(cs, rel)
    return out


def _entries(path: str) -> list[os.DirEntry[str]]:
    """A folder's entries, last name first (popped from the end: in name order)."""
    with os.scandir(path) as it:
        return sorted(it, key=lambda e: e.name, reverse=True)


def _dir_change(cs: ChangeSet, path: str, rel: str, st: os.stat_result,
                before: NodeKind) -> tuple[Change | None, bool]:
    """The change of a folder, and whether nothing of the workspace survives below it."""
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
    return change, before == "absent" or opaque or before != "dir"


def _file_change(cs: ChangeSet, path: str, rel: str, st: os.stat_result, before: NodeKind,
                 fresh: bool) -> Change | None:
    node = NodeState.from_stat(st, path)
    if before == "absent":
        # Copied up from the workspace: the command changed a file there, or renamed one to here (`mv a b`),
        # or linked to one. Only a candidate: `find_conflicts` calls it vanished when the workspace folder
        # changed while the command ran (a file deleted there meanwhile), never for a rename of its own.
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


def _placeholder(path: str, st: os.stat_result, before: NodeKind) -> bool:
    """An empty mount point bubblewrap made for a control path that did not exist."""
    empty = (stat.S_ISDIR(st.st_mode) and not os.listdir(path)) or (stat.S_ISREG(st.st_mode) and st.st_size == 0)
    return before == "absent" and empty


def _protected_below(cs: ChangeSet, rel: str) -> None:
    """Control paths inside a folder that goes away: they are kept, and reported."""
    for p in cs.protected:
        if p.startswith(rel + "/") and os.path.lexists(cs.workspace / p):
            kind = NodeState.of(cs.workspace / p).kind
            cs.protected_attempts.append(Change(p, "deleted", kind, kind))
            cs.control.setdefault(p, "a control path inside a folder the command removed: kept")


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
    skipped: list[Change] = field(default_factory=list)  # sockets and devices: cannot be re-created
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
    _Applier(upper, workspace, keep, changes.links, fresh, result).run(changes.changes)
    result.applied = True
    if store_entry is not None:
        result.notice = store_entry.commit()
    return result


def find_conflicts(cs: ChangeSet, workspace: Path, started_ns: int) -> list[Conflict]:
    """Targets that changed in the workspace after the command started (or since the set was read)."""
    out: list[Conflict] = []
    removed: list[str] = []
    folders: dict[str, bool] = {"": os.path.isdir(workspace) and not os.path.islink(workspace)}
    for c in cs.changes:
        if any(c.rel_path.startswith(r + "/") for r in removed):
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
            removed.append(c.rel_path)
    return out


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


class _Applier:
    """Applies changes in order (parents before children); folder modes and mtimes last."""

    def __init__(self, upper: Path, workspace: Path, keep: frozenset[str], links: dict[int, str],
                 fresh: set[str], result: ApplyResult) -> None:
        self.upper, self.ws, self.keep, self.fresh, self.result = str(upper), str(workspace), keep, fresh, result
        self.inodes = {ino: os.path.join(self.ws, rel) for ino, rel in links.items()}
        self.dirs: list[tuple[str, os.stat_result, bool]] = []

    def run(self, changes: list[Change]) -> None:
        for c in changes:
            try:
                done = self._one(c)
            except OSError as exc:
                self.result.error = f"{c.rel_path}: {exc.strerror or exc}"
                break
            (self.result.changes if done else self.result.skipped).append(c)
        for target, st, times in reversed(self.dirs):
            try:
                os.chmod(target, stat.S_IMODE(st.st_mode))
                if times:
                    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
            except OSError as exc:
                self.result.error = self.result.error or f"{target}: {exc.strerror or exc}"

    def _one(self, c: Change) -> bool:
        """Apply one change; False if it cannot be (a socket or device file)."""
        src, target = os.path.join(self.upper, c.rel_path), os.path.join(self.ws, c.rel_path)
        if c.kind == "deleted":
            remove_tree(target, self.keep)
            return True
        st = os.lstat(src)
        if c.node == "dir":
            if c.kind != "mode_changed":
                remove_tree(target, self.keep)
                if not os.path.isdir(target):  # a protected path inside may have kept it
                    os.mkdir(target, 0o700)
            self.dirs.append((target, st, c.kind != "mode_changed"))
            return True
        fresh = os.path.dirname(c.rel_path) in self.fresh
        tmp = target if fresh else os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.laca-apply")
        if tmp != target and os.path.lexists(tmp):
            os.unlink(tmp)  # left by an apply that was interrupted
        if not self._make(src, tmp, st, c):
            return False
        if tmp != target:
            if os.path.isdir(target) and not os.path.islink(target):
                remove_tree(target, self.keep)
            os.replace(tmp, target)
        return True

    def _make(self, src: str, dst: str, st: os.stat_result, c: Change) -> bool:
        """Create `dst` as a copy of the upper entry `src` (mode and times kept)."""
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(src), dst)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
        elif stat.S_ISFIFO(st.st_mode):
            os.mkfifo(dst)
            os.chmod(dst, stat.S_IMODE(st.st_mode))
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif not stat.S_ISREG(st.st_mode):
            return False
        elif st.st_nlink > 1 and st.st_ino in self.inodes:
            os.link(self.inodes[st.st_ino], dst)  # a hard link made by the command stays a hard link
        else:
            _copy_file(src, dst, st)
            if st.st_nlink > 1:
                self.inodes[st.st_ino] = os.path.join(self.ws, c.rel_path)
        return True


def _copy_file(src: str, dst: str, st: os.stat_result) -> None:
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            if st.st_size <= 1 << 16:
                data = memoryview(os.read(fin, st.st_size + 1))
                while data:
                    data = data[os.write(fd, data):]
            else:
                offset = 0
                while offset < st.st_size:
                    sent = os.sendfile(fd, fin, offset, st.st_size - offset)
                    if sent == 0:
                        break
                    offset += sent
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
            os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(fd)
    finally:
        os.close(fin)
