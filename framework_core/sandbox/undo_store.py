"""The session's undo store: pre-images of what commands and file writes changed, on disk and bounded.

An entry is begun before a change is applied. Just before a path is touched, the entry saves its pre-image
(contents, mode, mtime, symlink target, or that it was absent; a folder that goes away is saved whole). On
commit it records each path's post-image (type, mode, size, mtime), so that reverting can tell whether
someone changed the path since and ask before overwriting it. Entries live in `root/<id>/` (`info.json`,
`records.json`, `blobs/`), so they survive for `--continue`; the oldest are pruned past `max_bytes`.

Write-ahead: every saved copy (with its sha256) and the records are synced to disk, state "applying", before
the workspace is touched. The store acts only inside its workspace and believes its records only after
checking them (`undo_records.py`); a damaged entry is set aside and said, an interrupted apply is said at
start with how many of its paths landed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import threading
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Collection, ContextManager

from framework_core.sandbox.nodes import ABSENT, NodeState, _missing_parents, walk_tree
from framework_core.sandbox.undo_records import (DamagedEntry, EntryInfo, Record, Saved, Source, State, Workspace,
                                                 digest_fd, quarantine, read_info, read_records,
                                                 verify_blobs)
from framework_core.sandbox.undo_revert import Conflict, RevertResult, check, landed, restore
from framework_core.sandbox.workspace_lock import WorkspaceLock
from framework_core.wording import plural, size_words

__all__ = ["Conflict", "EntryInfo", "RevertResult", "Source", "UndoEntry", "UndoError", "UndoStore"]


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

        `link=True` saves a file by hard link instead of a copy (read once for its digest, never written);
        only for a caller that then replaces or removes the path rather than writing into it, so the saved
        inode never changes (if it does, its digest no longer matches and /undo refuses it)."""
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
        self._blobs += 1
        blob = str(self._blobs)
        target = blobs / blob
        try:
            if self._blobs == 1:
                blobs.mkdir(parents=True, exist_ok=True)
            linked = False
            if link and nlink == 1:
                try:
                    os.link(full, target)
                    linked = True
                except OSError:  # another file system, or hard links not allowed: copy
                    pass
            digest = _digest_of(target) if linked else _copy_synced(full, target)
        except OSError as exc:
            raise UndoError(f"cannot save the previous contents of {full}: {exc.strerror or exc}") from exc
        self.bytes += state.size
        return Saved(rel, state, blob, digest)

    # ---- finishing -------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Write the pre-images down and sync them (state "applying") before the workspace is touched, so that
        a change LACA could not finish can still be reverted. UndoError when they cannot be written: then
        nothing may be touched."""
        if self.records:
            try:
                if self._blobs:
                    _fsync_dir(self.dir / "blobs")
                self._write("applying")
                _fsync_dir(self.store.root)  # the entry's folder itself
            except OSError as exc:
                raise UndoError(f"cannot write the undo record in {self.dir}: {exc.strerror or exc}") from exc

    def commit(self) -> str | None:
        """Record every path's post-image and keep the entry. Returns a notice when older entries were
        pruned to stay within the store's size, or when this record could not be completed (the change was
        made: the notice says so; never raised). An entry with nothing saved is dropped."""
        if self._closed:
            return None
        self._closed = True
        if not self.records:
            self.discard()
            return None
        try:
            for rec in self.records:
                rec.post = NodeState.of(rec.path)
                if rec.post.kind == "dir" and (rec.whole or rec.saved[0].state.kind != "dir"):
                    rec.post_children = sorted(os.listdir(rec.path))
            self._write("committed")
        except OSError as exc:  # the change itself was made: say so, and keep what prepare() wrote
            return self.store._incomplete(self, exc.strerror or str(exc))
        return self.store._committed(self)

    def discard(self) -> None:
        """Forget this entry (nothing was applied)."""
        self._closed = True
        shutil.rmtree(self.dir, ignore_errors=True)

    def info(self, state: State) -> EntryInfo:
        return EntryInfo(self.id, self.label, self.source, self.created_ns, state, self.bytes, len(self.records))

    def _write(self, state: State) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        records = json.dumps([r.to_json() for r in self.records], separators=(",", ":"))
        self.bytes = sum(s.state.size for r in self.records for s in r.saved if s.blob) + len(records)
        self.store.write_json(self.dir / "records.json", records)
        self.store.write_json(self.dir / "info.json", json.dumps(self.info(state).to_json()))


class UndoStore:
    """Undo entries for one session, newest first, in `root` (the session's directory). Given `workspace`,
    every recorded path must lie beneath it, or the entry is set aside as damaged (production always passes
    it; `app/wiring.py`, `teps.py`). Every change recorded here lands under the workspace's lock
    (`workspace_lock.py`, `landing()`), and `revert` holds it too: one writer per workspace, across sessions."""

    def __init__(self, root: str | os.PathLike[str], max_bytes: int, *,
                 workspace: str | os.PathLike[str] | None = None, lock: WorkspaceLock | None = None) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.workspace = Workspace(workspace) if workspace is not None else None
        self.lock = lock if lock is not None or workspace is None else WorkspaceLock.for_workspace(Path(workspace))
        self._lock = threading.Lock()
        self._notices: list[str] = []
        self.set_aside = 0  # damaged entries moved aside in this session (at start or by /undo)
        self.root.mkdir(parents=True, exist_ok=True)
        self._infos: dict[str, EntryInfo] = {}
        numbers = [0]
        for d in sorted(self.root.iterdir()):
            if m := re.match(r"\d+", d.name):
                numbers.append(int(m.group()))
            self._load(d)
        self._next = max(numbers) + 1
        for n, info in enumerate(self.entries(), start=1):
            if info.state == "applying":
                self._notices.append(
                    f"The change set of call {n} (`{_short(info.label, 80)}`) was interrupted: "
                    f"{'?' if info.landed is None else info.landed} of {plural(info.paths, 'path')} landed; "
                    f"`/undo {n}` restores "
                    + ("it." if n == 1 else f"it (and undoes the {n - 1} newer changes)."))

    def _load(self, d: Path) -> None:
        """Believe one entry folder after checking it; set it aside (and say so) when it is damaged."""
        if ".damaged-" in d.name or d.is_symlink() or not d.is_dir():
            return
        if not d.name.isdigit():
            if (d / "info.json").exists():
                self._notices.append(quarantine(d, "its folder name is not an undo entry's number"))
                self.set_aside += 1
            return
        try:
            info = read_info(d)
            records = read_records(d, self.workspace)
        except FileNotFoundError:  # no info.json
            if (d / "records.json").exists():
                self._notices.append(quarantine(d, DamagedEntry(d / "info.json", "is missing")))
                self.set_aside += 1
            else:  # begun, never prepared: nothing was applied, only saved copies are there
                shutil.rmtree(d, ignore_errors=True)
            return
        except DamagedEntry as exc:
            self._notices.append(quarantine(d, exc))
            self.set_aside += 1
            return
        if info.state == "applying":
            try:
                info = replace(info, landed=landed(records), paths=len(records))
            except OSError:  # a path that cannot be looked at: the entry is still there for /undo
                pass
        self._infos[info.id] = info

    def take_notices(self) -> list[str]:
        """What the start has to say about the store (damaged entries set aside, interrupted applies), once."""
        with self._lock:
            notices, self._notices = self._notices, []
            return notices

    def write_json(self, path: Path, text: str) -> None:
        """Write a record file atomically and durably (temporary file, fsync, rename, fsync the folder)."""
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(text.encode())
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(path.parent)

    def landing(self, what: str = "") -> ContextManager[None]:
        """The workspace's lock for a conflict check, a landing and its undo record (WorkspaceBusy when another
        session keeps it past the wait); nothing without a workspace."""
        return self.lock.hold(what) if self.lock is not None else nullcontext()

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
        is reverted and the conflicts are returned, unless `force`. Every entry is checked first (paths
        beneath the workspace, saved copies present and matching their digests): a damaged one is set aside
        and nothing is touched. Held under the workspace's lock: a session landing meanwhile is waited for."""
        from framework_core.sandbox.workspace_lock import WorkspaceBusy

        try:
            with self.landing("/undo"):
                return self._revert(n, force)
        except WorkspaceBusy as exc:
            return RevertResult(errors=[exc.strerror or str(exc)])

    def _revert(self, n: int, force: bool) -> RevertResult:
        with self._lock:
            infos = sorted(self._infos.values(), key=lambda e: e.id, reverse=True)[:max(n, 0)]
            loaded: list[tuple[EntryInfo, list[Record]]] = []
            verified = {}
            for info in infos:
                d = self.root / info.id
                try:
                    records = read_records(d, self.workspace)
                    verified[info.id] = verify_blobs(d, records)
                except DamagedEntry as exc:
                    del self._infos[info.id]
                    self.set_aside += 1
                    return RevertResult(errors=[quarantine(d, exc)], refused=[info])
                loaded.append((info, records))
            result = RevertResult(conflicts=check(loaded))
            if result.conflicts and not force:
                return result
            for info, records in loaded:
                before = len(result.errors)
                for rec in reversed(records):
                    result.restored += restore(rec, self.root / info.id / "blobs", verified[info.id],
                                               self.workspace, result.errors)
                if len(result.errors) > before:
                    break  # keep this entry and the older ones: the user can look and try again
                result.reverted.append(info)
                del self._infos[info.id]
                shutil.rmtree(self.root / info.id, ignore_errors=True)
            return result

    def _incomplete(self, entry: UndoEntry, why: str) -> str:
        """The final write of an entry failed after its change was made: keep what prepare() wrote (state
        "applying", no post-images: /undo restores without checking for later edits) and say the truth."""
        with self._lock:
            if (entry.dir / "info.json").exists():
                self._infos[entry.id] = entry.info("applying")
        return (f"`{_short(entry.label, 80)}` was carried out, but its undo record could not be completed "
                f"({why}); /undo may not restore it fully.")

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
            notes.append(f"Undo history is limited to {size_words(self.max_bytes)}: the oldest "
                         f"{plural(len(dropped), 'change')} can no longer be undone ({names}).")
        if total > self.max_bytes:
            notes.append(f"This change alone keeps {size_words(total)} for undo, more than the limit "
                         f"({size_words(self.max_bytes)}); it is dropped at the next change.")
        return " ".join(notes) or None


# ---- files -------------------------------------------------------------------------------------------
def _copy_synced(src: str, dst: Path) -> str:
    """Copy a workspace file (never through a symlink) to a new blob, synced; returns its sha256."""
    h = hashlib.sha256()
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while chunk := os.read(fin, 1 << 20):
                h.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fout, view):]
            os.fsync(fout)
        finally:
            os.close(fout)
    finally:
        os.close(fin)
    return h.hexdigest()


def _digest_of(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return digest_fd(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---- wording -----------------------------------------------------------------------------------------
def _short(label: str, limit: int = 40) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"


# ---- file system helpers (shared with changeset.py) ----------------------------------------------------
