"""Reading an overlay's change set: walk the upper directory (without recursion), tell each change, judge
it with the gate (`gate.py`) against the workspace as the command left it (`overlay_view.py`), and bound it
(`sandbox.max_apply_bytes`). What the upper directory holds is described in `changeset.py`."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

from framework_core.sandbox.change_model import (ORIGIN_XATTRS, OPAQUE_XATTRS, UNSUPPORTED_XATTRS, Change,
                                                 ChangeSet, ChangeSetError)
from framework_core.sandbox.gate import LACA_FILES, Gate
from framework_core.sandbox.nodes import NodeKind, NodeState
from framework_core.sandbox.overlay_view import AfterTree, adopted_control


def read_changes(upper: Path, workspace: Path, *, protected: Iterable[str] = (), mounted: Iterable[str] = (),
                 max_bytes: int = 0, reasons: dict[str, str] | None = None) -> ChangeSet:
    """Walk the upper directory of an overlay of `workspace` and judge each change (`gate.py`): data and what
    runs later land, control paths do not. `protected` are the user's control paths (sandbox.protected_paths),
    `mounted` the control paths bubblewrap bound read-only (an empty one of them that did not exist is a
    mount point, never applied). Over `max_bytes` (0: no bound) of files to copy, `over_limit` says so."""
    user = tuple(sorted({p.strip("/") for p in protected if p.strip("/")}))
    prot = tuple(sorted({*user, *(p.strip("/") for p in mounted if p.strip("/")), *LACA_FILES}))
    cs = ChangeSet(Path(upper), Path(workspace), protected=prot)
    tree = AfterTree(Path(upper), Path(workspace))
    sizes: dict[str, int] = {}
    raw = _scan(cs, str(upper), tree.fresh, sizes)
    gate = Gate(tree, str(workspace), user, dict(reasons or {}))
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
            if judged.implicit:
                cs.implicit[rel] = judged.reason
        cs.changes.append(change)
        if change.node == "file" and change.kind != "deleted":
            cs.apply_bytes += sizes.get(rel, 0)
    _adopt(cs, gate, {c.rel_path for c in raw}, sizes)
    _new_environments(cs)
    if max_bytes and cs.apply_bytes > max_bytes:
        cs.over_limit = (f"not applied: {cs.apply_bytes:,} bytes, over the limit {max_bytes:,}; raise "
                         "sandbox.max_apply_bytes")
    return cs


def _adopt(cs: ChangeSet, gate: Gate, changed: set[str], sizes: dict[str, int]) -> None:
    """A folder the command made a repository (HEAD, objects/, refs/ added to it) adopts the files already
    there; when git would act on one of them, nothing of that repository lands."""
    for folder, judged in adopted_control(gate, cs.workspace, changed).items():
        why = f"it would make {folder or '.'} a git repository whose {judged.rel} git would act on ({judged.reason})"
        keep = []
        for c in cs.changes:
            if folder == "" or c.rel_path.startswith(folder + "/"):
                cs.control[c.rel_path] = why
                cs.runs_later.pop(c.rel_path, None)
                cs.implicit.pop(c.rel_path, None)
                cs.protected_attempts.append(c)
                if c.node == "file" and c.kind != "deleted":
                    cs.apply_bytes -= sizes.get(c.rel_path, 0)
            else:
                keep.append(c)
        cs.changes = keep


def _new_environments(cs: ChangeSet) -> None:
    """A virtual environment the command made whole (`python -m venv .venv && pip install …`) holds start-up files
    venv and pip write: they run only once someone uses that new environment, so they are named, not held. One
    added to an environment that was there before is held (see `runs_later.py`)."""
    made = {c.rel_path for c in cs.changes if c.kind == "created"}
    envs = {os.path.dirname(rel) for rel in made if os.path.basename(rel) == "pyvenv.cfg"}
    fresh = {e for e in envs if e in made}  # the environment's folder itself is new: nothing ran it before
    for rel in list(cs.implicit):
        if any(rel.startswith(e + "/") for e in fresh):
            del cs.implicit[rel]


def _scan(cs: ChangeSet, upper: str, fresh_dirs: set[str], sizes: dict[str, int]) -> list[Change]:
    """Every change in the upper directory, parents before their contents, without recursion (a tree 1,200
    levels deep is walked like a flat one). Folders whose workspace contents do not survive go in
    `fresh_dirs`, regular files' sizes in `sizes`. Placeholders and control paths kept below a removed folder
    are noted in `cs`."""
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
        if stat.S_ISREG(st.st_mode):
            sizes[rel] = st.st_size  # sparse files count at their size
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


