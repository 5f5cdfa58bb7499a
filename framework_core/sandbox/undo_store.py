"""The session's undo store: pre-images of what commands and file writes changed, on disk and bounded.

An entry is begun before a change is applied. Just before a path is touched, the entry saves its pre-image
(contents, mode, mtime, symlink target, or that it was absent; a folder that goes away is saved whole). On
commit it records each path's post-image (type, mode, size, mtime), so that reverting can tell whether
someone changed the path since and ask before overwriting it. Entries live in `root/<id>/` (`info.json`,
`records.json`, `blobs/`), so they survive for `--continue`; the oldest are pruned past `max_bytes`.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Collection, Literal

from framework_core.sandbox.nodes import (ABSENT, NodeState, _missing_parents, remove_tree,
                                          restore_node, walk_tree)
from framework_core.wording import plural

Source = Literal["command", "writeFile"]


@dataclass(frozen=True)
class Conflict:
    path: str
    reason: str


@dataclass
class Saved:
    rel: str  # "" for the recorded path itself, else relative to it (descendants of a folder saved whole)
    state: NodeState
    blob: str | None = None  # file contents, under the entry's blobs/


@dataclass
class Record:
    path: str  # absolute
    saved: list[Saved]  # parents first
    whole: bool = False  # a folder saved with everything in it
    keep: list[str] = field(default_factory=list)  # protected descendants: never saved, never removed
    post: NodeState | None = None  # None: the apply that made this record did not finish
    post_children: list[str] | None = None  # a folder this entry created or replaced: its names after

    def to_json(self) -> dict:
        return {"path": self.path, "saved": [[s.rel, s.state.to_json(), s.blob] for s in self.saved],
                "whole": self.whole, "keep": self.keep, "post": self.post.to_json() if self.post else None,
                "post_children": self.post_children}

    @classmethod
    def from_json(cls, d: dict) -> Record:
        saved = [Saved(rel, NodeState.from_json(st), blob) for rel, st, blob in d["saved"]]
        post = NodeState.from_json(d["post"]) if d.get("post") else None
        return cls(d["path"], saved, d.get("whole", False), d.get("keep", []), post, d.get("post_children"))


@dataclass(frozen=True)
class EntryInfo:
    id: str
    label: str  # the command text, or "writeFile PATH"
    source: Source
    created_ns: int
    state: Literal["applying", "committed"]  # applying: LACA stopped before the change was fully applied
    bytes: int
    paths: int


class UndoError(Exception):
    """A pre-image could not be saved or read; the message names the path."""


class UndoEntry:
    """One change being recorded. Save pre-images, `prepare()` before touching anything, then `commit()`."""

    def __init__(self, store: UndoStore, entry_id: str, label: str, source: Source) -> None:
        self.store, self.id, self.label, self.source = store, entry_id, label, source
        self.dir = store.root / entry_id
        self.created_ns = time.time_ns()
        self.records: list[Record] = []
        self.bytes = 0
        self._blobs = 0
        self._closed = False

    # ---- saving ----------------------------------------------------------------------------------------
    def save_preimage(self, path: str | os.PathLike[str], *, whole: bool = False, keep: Collection[str] = (),
                      link: bool = False) -> NodeState:
        """Save what is at `path` now; `whole` saves a folder with everything in it (except `keep` paths).

        `link=True` saves a file by hard link instead of a copy (free); only for a caller that then
        replaces or removes the path rather than writing into it, so the saved inode never changes."""
        path = os.fspath(path)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            for missing in _missing_parents(path):  # a write creates them: undo removes them (if empty)
                self.save_absent(missing)
            return self.save_absent(path)
        root = NodeState.from_stat(st, path)
        saved = [self._save(path, "", root, st.st_nlink, link)]
        kept: list[str] = []
        if whole and root.kind == "dir":
            for rel, full, sub, sub_st in walk_tree(path, frozenset(keep), kept):
                saved.append(self._save(full, rel, sub, sub_st.st_nlink, link))
        self.records.append(Record(path, saved, whole and root.kind == "dir", kept))
        return root

    def save_absent(self, path: str | os.PathLike[str]) -> NodeState:
        """Record that `path` did not exist (it is about to be created), without looking."""
        self.records.append(Record(os.fspath(path), [Saved("", ABSENT)]))
        return ABSENT

    def _save(self, full: str, rel: str, state: NodeState, nlink: int, link: bool) -> Saved:
        if state.kind != "file":
            return Saved(rel, state)
        blobs = self.dir / "blobs"
        if self._blobs == 0:
            blobs.mkdir(parents=True, exist_ok=True)
        self._blobs += 1
        blob = str(self._blobs)
        try:
            if link and nlink == 1:
                try:
                    os.link(full, blobs / blob)
                except OSError:  # another file system, or hard links not allowed: copy
                    shutil.copyfile(full, blobs / blob)
            else:
                shutil.copyfile(full, blobs / blob)
        except OSError as exc:
            raise UndoError(f"cannot save the previous contents of {full}: {exc.strerror or exc}") from exc
        self.bytes += state.size
        return Saved(rel, state, blob)

    # ---- finishing -------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Write the pre-images down (state "applying") before the workspace is touched, so that a change
        LACA could not finish can still be reverted."""
        if self.records:
            self._write("applying")

    def commit(self) -> str | None:
        """Record every path's post-image and keep the entry. Returns a notice when older entries were
        pruned to stay within the store's size. An entry with nothing saved is dropped."""
        if self._closed:
            return None
        self._closed = True
        if not self.records:
            self.discard()
            return None
        for rec in self.records:
            rec.post = NodeState.of(rec.path)
            if rec.post.kind == "dir" and (rec.whole or rec.saved[0].state.kind != "dir"):
                rec.post_children = sorted(os.listdir(rec.path))
        self._write("committed")
        return self.store._committed(self)

    def discard(self) -> None:
        """Forget this entry (nothing was applied)."""
        self._closed = True
        shutil.rmtree(self.dir, ignore_errors=True)

    def info(self, state: Literal["applying", "committed"]) -> EntryInfo:
        return EntryInfo(self.id, self.label, self.source, self.created_ns, state, self.bytes, len(self.records))

    def _write(self, state: Literal["applying", "committed"]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        records = json.dumps([r.to_json() for r in self.records], separators=(",", ":"))
        self.bytes = sum(s.state.size for r in self.records for s in r.saved if s.blob) + len(records)
        _write_atomic(self.dir / "records.json", records)
        _write_atomic(self.dir / "info.json", json.dumps(asdict(self.info(state))))


@dataclass
class RevertResult:
    reverted: list[EntryInfo] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    restored: int = 0  # paths put back
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.conflicts and not self.reverted:
            return (f"Not undone: {plural(len(self.conflicts), 'path')} changed since "
                    f"({', '.join(c.path for c in self.conflicts[:3])}{' …' if len(self.conflicts) > 3 else ''}).")
        if not self.reverted:
            return "Nothing to undo."
        names = ", ".join(f"`{e.label}`" for e in self.reverted)
        text = f"Undone: {names} ({plural(self.restored, 'path')} restored)."
        return text + (f" {plural(len(self.errors), 'path')} could not be restored." if self.errors else "")


class UndoStore:
    """Undo entries for one session, newest first, in `root` (the session's directory)."""

    def __init__(self, root: str | os.PathLike[str], max_bytes: int) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self.root.mkdir(parents=True, exist_ok=True)
        self._infos: dict[str, EntryInfo] = {}
        for d in sorted(self.root.iterdir()):
            info = _read_info(d)
            if info is not None:
                self._infos[info.id] = info
            elif d.is_dir() and d.name.isdigit():  # begun but never written: nothing was applied
                shutil.rmtree(d, ignore_errors=True)
        self._next = max((int(i) for i in self._infos), default=0) + 1

    def begin(self, label: str, source: Source) -> UndoEntry:
        with self._lock:
            entry_id = f"{self._next:06d}"
            self._next += 1
        return UndoEntry(self, entry_id, label, source)

    def entries(self) -> list[EntryInfo]:
        with self._lock:
            return sorted(self._infos.values(), key=lambda e: e.id, reverse=True)

    def total_bytes(self) -> int:
        with self._lock:
            return sum(e.bytes for e in self._infos.values())

    def revert(self, n: int = 1, *, force: bool = False) -> RevertResult:
        """Undo the newest `n` entries, newest first. If a path they touched was changed since, nothing
        is reverted and the conflicts are returned, unless `force`."""
        with self._lock:
            infos = sorted(self._infos.values(), key=lambda e: e.id, reverse=True)[:max(n, 0)]
            try:
                loaded = [(info, _read_records(self.root / info.id)) for info in infos]
            except UndoError as exc:
                return RevertResult(errors=[str(exc)])
            result = RevertResult(conflicts=_check(loaded))
            if result.conflicts and not force:
                return result
            for info, records in loaded:
                before = len(result.errors)
                for rec in reversed(records):
                    result.restored += _restore(rec, self.root / info.id / "blobs", result.errors)
                if len(result.errors) > before:
                    break  # keep this entry and the older ones: the user can look and try again
                result.reverted.append(info)
                del self._infos[info.id]
                shutil.rmtree(self.root / info.id, ignore_errors=True)
            return result

    def _committed(self, entry: UndoEntry) -> str | None:
        with self._lock:
            self._infos[entry.id] = entry.info("committed")
            return self._prune(entry.id)

    def _prune(self, newest: str) -> str | None:
        total = sum(e.bytes for e in self._infos.values())
        dropped: list[EntryInfo] = []
        for info in sorted(self._infos.values(), key=lambda e: e.id):
            if total <= self.max_bytes or info.id == newest:
                break
            dropped.append(info)
            total -= info.bytes
            del self._infos[info.id]
            shutil.rmtree(self.root / info.id, ignore_errors=True)
        notes: list[str] = []
        if dropped:
            names = ", ".join(f"`{_short(e.label)}`" for e in dropped[:3]) + (" …" if len(dropped) > 3 else "")
            notes.append(f"Undo history is limited to {_size(self.max_bytes)}: the oldest "
                         f"{plural(len(dropped), 'change')} can no longer be undone ({names}).")
        if total > self.max_bytes:
            notes.append(f"This change alone keeps {_size(total)} for undo, more than the limit "
                         f"({_size(self.max_bytes)}); it is dropped at the next change.")
        return " ".join(notes) or None


# ---- reverting -----------------------------------------------------------------------------------------
def _check(loaded: list[tuple[EntryInfo, list[Record]]]) -> list[Conflict]:
    """Compare each path with the post-image its entry recorded, as it will be when the newer entries
    in this batch have been reverted (so a path touched by two of them is not a false conflict)."""
    sim: dict[str, NodeState] = {}
    conflicts: list[Conflict] = []
    for _info, records in loaded:
        for rec in reversed(records):
            current = sim.get(rec.path) or NodeState.of(rec.path)
            if rec.post is not None and not current.matches(rec.post):
                conflicts.append(Conflict(rec.path, _why(rec.post, current)))
            elif rec.post_children is not None and current.kind == "dir":
                extra = sorted(_children(rec.path, sim) - set(rec.post_children))
                if extra:
                    conflicts.append(Conflict(rec.path, "the folder has new entries since: " + ", ".join(extra[:5])))
            for s in rec.saved:
                sim[os.path.join(rec.path, s.rel) if s.rel else rec.path] = s.state
    return conflicts


def _children(path: str, sim: dict[str, NodeState]) -> set[str]:
    names = set(os.listdir(path))
    for p, state in sim.items():
        if os.path.dirname(p) == path:
            (names.discard if state.kind == "absent" else names.add)(os.path.basename(p))
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


def _restore(rec: Record, blobs: Path, errors: list[str]) -> int:
    """Put one record's pre-image back; returns how many paths were restored."""
    root = rec.saved[0].state
    try:
        current = NodeState.of(rec.path)
        if root.kind == "dir" and not rec.whole and current.kind == "dir":
            os.chmod(rec.path, root.mode)
            os.utime(rec.path, ns=(root.mtime_ns, root.mtime_ns))
            return 1
        if current.kind != "absent":
            remove_tree(rec.path, frozenset(rec.keep))
        if root.kind != "absent":
            os.makedirs(os.path.dirname(rec.path), exist_ok=True)
        dirs: list[tuple[str, NodeState]] = []
        for s in rec.saved:
            full = os.path.join(rec.path, s.rel) if s.rel else rec.path
            restore_node(full, s.state, blobs / s.blob if s.blob else None)
            if s.state.kind == "dir":
                dirs.append((full, s.state))
        for full, state in reversed(dirs):  # after their contents, which change a folder's mtime
            os.chmod(full, state.mode)
            os.utime(full, ns=(state.mtime_ns, state.mtime_ns))
        return len(rec.saved)
    except OSError as exc:
        errors.append(f"{rec.path}: {exc.strerror or exc}")
        return 0


# ---- files of the store --------------------------------------------------------------------------------
def _read_info(d: Path) -> EntryInfo | None:
    try:
        data = json.loads((d / "info.json").read_text())
        return EntryInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def _read_records(d: Path) -> list[Record]:
    try:
        return [Record.from_json(r) for r in json.loads((d / "records.json").read_text())]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UndoError(f"the undo entry in {d} cannot be read ({exc}); remove that folder") from exc


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _size(n: int) -> str:
    size: float = n
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


def _short(label: str, limit: int = 40) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"


# ---- file system helpers (shared with changeset.py) ----------------------------------------------------
