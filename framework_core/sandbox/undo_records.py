"""What an undo entry holds on disk, and how it is read back: checked before it is believed.

An entry is a folder `root/<id>/` with `info.json` (what the change was), `records.json` (each touched path
and its pre-image) and `blobs/` (saved file contents, each with a sha256 digest in the record). On read, the
shape of both files is validated (types, bounded size; the schema has a fixed depth), every recorded path
must lie beneath the workspace (no `..`, no relative path), and a saved copy must be a regular file whose
digest matches before anything is removed. A record that fails is damaged: it is set aside (renamed
`<id>.damaged-<time>`) and said, never deleted and never acted on.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from framework_core.sandbox.nodes import NodeKind, NodeState

Source = Literal["command", "writeFile"]
State = Literal["applying", "committed"]

MAX_INFO_BYTES = 64 * 1024
MAX_RECORDS_BYTES = 256 * 1024 * 1024
_KINDS: frozenset[NodeKind] = frozenset(("absent", "file", "dir", "symlink", "fifo", "other"))
_DIGEST = re.compile(r"[0-9a-f]{64}")


class DamagedEntry(Exception):
    """An undo entry that cannot be believed: `file` is the file at fault, `why` says what is wrong."""

    def __init__(self, file: Path, why: str) -> None:
        super().__init__(f"{file}: {why}")
        self.file, self.why = file, why


@dataclass
class Saved:
    rel: str  # "" for the recorded path itself, else relative to it (descendants of a folder saved whole)
    state: NodeState
    blob: str | None = None  # file contents, under the entry's blobs/
    digest: str | None = None  # sha256 of the blob, taken when it was saved


@dataclass
class Record:
    path: str  # absolute
    saved: list[Saved]  # parents first
    whole: bool = False  # a folder saved with everything in it
    keep: list[str] = field(default_factory=list)  # protected descendants: never saved, never removed
    post: NodeState | None = None  # None: the apply that made this record did not finish
    post_children: list[str] | None = None  # a folder this entry created or replaced: its names after

    def to_json(self) -> dict:
        return {"path": self.path, "saved": [[s.rel, s.state.to_json(), s.blob, s.digest] for s in self.saved],
                "whole": self.whole, "keep": self.keep, "post": self.post.to_json() if self.post else None,
                "post_children": self.post_children}


@dataclass(frozen=True)
class EntryInfo:
    id: str
    label: str  # the command text, or "writeFile PATH"
    source: Source
    created_ns: int
    state: State  # applying: LACA stopped before the change was fully applied
    bytes: int
    paths: int
    landed: int | None = None  # an interrupted apply found at start: how many paths had changed (not stored)

    def to_json(self) -> dict:
        data = asdict(self)
        del data["landed"]
        return data


# ---- the workspace -------------------------------------------------------------------------------------
class Workspace:
    """The folder an undo store may act in: as given and as resolved (both name the same folder)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        given = os.path.abspath(os.fspath(path))
        self.roots = tuple(dict.fromkeys((given, os.path.realpath(given))))

    def root_of(self, path: str) -> str | None:
        """The root `path` lies strictly beneath, by its text (no `..`, no `.`, no doubled slash)."""
        if not _is_clean_abs(path):
            return None
        for root in self.roots:
            if root == "/" or path.startswith(root + "/"):
                return root
        return None

    def unsafe_parent(self, path: str) -> str | None:
        """A folder between the workspace and `path` that is now a symlink or not a folder (so acting on
        `path` would reach outside the workspace), or None. Walks each component with lstat."""
        root = self.root_of(path)
        if root is None:
            return path
        current = root
        for name in path[len(root):].strip("/").split("/")[:-1]:
            current = os.path.join(current, name)
            try:
                st = os.lstat(current)
            except (FileNotFoundError, NotADirectoryError):
                return None  # the rest is absent too: created by the restore, as real folders
            if not stat.S_ISDIR(st.st_mode):
                return current
        return None


def _is_clean_abs(path: str) -> bool:
    return (path.startswith("/") and not path.startswith("//") and "\0" not in path
            and os.path.normpath(path) == path)


def _is_clean_rel(rel: str) -> bool:
    return bool(rel) and "\0" not in rel and not rel.startswith("/") and all(
        part not in ("", ".", "..") for part in rel.split("/"))


# ---- reading -------------------------------------------------------------------------------------------
def load_json(file: Path, limit: int) -> Any:
    """The JSON in `file`, at most `limit` bytes; DamagedEntry for anything else (FileNotFoundError passes)."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DamagedEntry(file, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DamagedEntry(file, "is not a regular file")
        if st.st_size > limit:
            raise DamagedEntry(file, f"is {st.st_size:,} bytes, more than an undo record can be ({limit:,})")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise DamagedEntry(file, f"cannot be read ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise DamagedEntry(file, "is not valid JSON (cut short or edited)") from exc


def read_info(d: Path) -> EntryInfo:
    """The entry's info.json, checked; FileNotFoundError when there is none."""
    file = d / "info.json"
    data = load_json(file, MAX_INFO_BYTES)
    fields = {"id": str, "label": str, "source": str, "created_ns": int, "state": str, "bytes": int, "paths": int}
    if not isinstance(data, dict):
        raise DamagedEntry(file, "does not hold an object")
    for key, typ in fields.items():
        if not isinstance(data.get(key), typ) or isinstance(data.get(key), bool):
            raise DamagedEntry(file, f"its `{key}` is missing or not a {typ.__name__}")
    if data["id"] != d.name or not d.name.isdigit():
        raise DamagedEntry(file, f"its id {data['id'][:40]!r} does not match its folder {d.name!r}")
    if data["source"] not in ("command", "writeFile") or data["state"] not in ("applying", "committed"):
        raise DamagedEntry(file, "its `source` or `state` is not one LACA writes")
    if min(data["bytes"], data["paths"], data["created_ns"]) < 0:
        raise DamagedEntry(file, "holds a negative number")
    return EntryInfo(**{k: data[k] for k in fields})


def label_of(d: Path) -> str | None:
    """The label in a damaged entry's info.json, when it can still be read."""
    try:
        data = load_json(d / "info.json", MAX_INFO_BYTES)
    except (OSError, DamagedEntry):
        return None
    label = data.get("label") if isinstance(data, dict) else None
    return label if isinstance(label, str) else None


def read_records(d: Path, workspace: Workspace | None) -> list[Record]:
    """The entry's records.json, checked: its shape, and (given a workspace) that every path lies beneath it."""
    file = d / "records.json"
    try:
        data = load_json(file, MAX_RECORDS_BYTES)
    except FileNotFoundError as exc:
        raise DamagedEntry(file, "is missing") from exc
    if not isinstance(data, list):
        raise DamagedEntry(file, "does not hold a list")
    try:
        return [_record(item, workspace) for item in data]
    except ValueError as exc:
        raise DamagedEntry(file, str(exc)) from exc


def _record(d: Any, workspace: Workspace | None) -> Record:
    if not isinstance(d, dict):
        raise ValueError("a record is not an object")
    path = d.get("path")
    if not isinstance(path, str) or not _is_clean_abs(path):
        raise ValueError(f"a recorded path is not a plain absolute path: {str(path)[:200]!r}")
    if workspace is not None and workspace.root_of(path) is None:
        raise ValueError(f"it names {path}, outside the workspace {workspace.roots[0]}")
    saved = d.get("saved")
    if not isinstance(saved, list) or not saved:
        raise ValueError(f"the record of {path} saves nothing")
    items = [_saved(s, path) for s in saved]
    if items[0].rel != "" or any(s.rel == "" for s in items[1:]):
        raise ValueError(f"the record of {path} does not start with the path itself")
    keep = d.get("keep", [])
    if not isinstance(keep, list) or not all(isinstance(k, str) and _is_clean_abs(k) and k.startswith(path + "/")
                                              for k in keep):
        raise ValueError(f"the record of {path} keeps paths outside it")
    whole = d.get("whole", False)
    post = _state(d["post"]) if d.get("post") is not None else None
    children = d.get("post_children")
    if not isinstance(whole, bool) or (children is not None and not (
            isinstance(children, list) and all(isinstance(c, str) and _is_clean_rel(c) and "/" not in c
                                               for c in children))):
        raise ValueError(f"the record of {path} has a malformed `whole` or `post_children`")
    return Record(path, items, whole, keep, post, children)


def _saved(s: Any, path: str) -> Saved:
    if not isinstance(s, list) or len(s) not in (3, 4):
        raise ValueError(f"a saved item of {path} is malformed")
    rel, state, blob = s[0], _state(s[1]), s[2]
    digest = s[3] if len(s) == 4 else None
    if not isinstance(rel, str) or (rel and not _is_clean_rel(rel)):
        raise ValueError(f"a saved item of {path} names {str(rel)[:200]!r}, not a plain relative path")
    if state.kind == "file":
        if not isinstance(blob, str) or not blob.isdigit():
            raise ValueError(f"the saved copy of {path} is not named")
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise ValueError(f"the saved copy of {path} has no digest to check it against")
    elif blob is not None or digest is not None:
        raise ValueError(f"a saved {state.kind} of {path} names a copy")
    return Saved(rel, state, blob, digest)


def _state(data: Any) -> NodeState:
    ok = (isinstance(data, list) and len(data) == 5 and data[0] in _KINDS and isinstance(data[4], str)
          and all(isinstance(n, int) and not isinstance(n, bool) for n in data[1:4])
          and 0 <= data[1] <= 0o7777 and data[2] >= 0 and "\0" not in data[4])
    if not ok:
        raise ValueError(f"a node state is malformed: {str(data)[:100]}")
    return NodeState(*data)


# ---- saved copies --------------------------------------------------------------------------------------
Identity = tuple[int, int, int]  # (device, inode, size) of a verified blob


def verify_blobs(d: Path, records: list[Record]) -> dict[str, Identity]:
    """Check every saved copy (present, a regular file and not a symlink, readable, the recorded digest)
    before anything is removed; returns each blob's identity, so the restore can tell it is the same file."""
    out: dict[str, Identity] = {}
    if any(s.blob for rec in records for s in rec.saved):
        try:
            blobs_st = os.lstat(d / "blobs")
        except OSError as exc:
            raise DamagedEntry(d / "blobs", f"the saved copies are missing ({exc.strerror})") from exc
        if not stat.S_ISDIR(blobs_st.st_mode):
            raise DamagedEntry(d / "blobs", "is not a folder (a symlink?): the saved copies cannot be trusted")
    for rec in records:
        for s in rec.saved:
            if s.blob is None:
                continue
            file = d / "blobs" / s.blob
            try:
                fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
            except FileNotFoundError as exc:
                raise DamagedEntry(file, f"the saved copy of {rec.path} is missing") from exc
            except OSError as exc:
                why = "is a symlink" if os.path.islink(file) else f"cannot be read ({exc.strerror or exc})"
                raise DamagedEntry(file, f"the saved copy of {rec.path} {why}") from exc
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size != s.state.size or digest_fd(fd) != s.digest:
                    raise DamagedEntry(file, f"the saved copy of {rec.path} does not match its record "
                                             "(changed or cut short since it was saved)")
            except OSError as exc:
                raise DamagedEntry(file, f"the saved copy of {rec.path} cannot be read ({exc.strerror})") from exc
            finally:
                os.close(fd)
            out[s.blob] = (st.st_dev, st.st_ino, st.st_size)
    return out


def digest_fd(fd: int) -> str:
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        h.update(chunk)
    return h.hexdigest()


# ---- setting aside -------------------------------------------------------------------------------------
def quarantine(d: Path, damage: DamagedEntry | str) -> str:
    """Rename a damaged entry `<id>.damaged-<time>` (nothing is deleted); returns what to tell the user."""
    label = label_of(d)
    held = f" It held `{label[:120]}`." if label else ""
    why = str(damage) if isinstance(damage, DamagedEntry) else f"{d}: {damage}"
    aside = d.with_name(f"{d.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    n = 1
    while aside.exists():
        n += 1
        aside = d.with_name(f"{d.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{n}")
    try:
        os.rename(d, aside)
        kept = f"It was set aside as {aside} (nothing deleted; remove that folder when you no longer need it)."
    except OSError as exc:
        kept = f"It could not be set aside ({exc.strerror}) and is ignored; remove {d} to silence this."
    return f"An undo record is damaged and was not used: {why}.{held} {kept}"
