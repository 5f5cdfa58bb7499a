"""Folders a command's sandbox needs, kept for the next command when it left them exactly as new.

Making and removing them costs more than a short command: the home's mount points (about thirty folders that
bubblewrap makes), and an overlay's upper and work folders. A folder serves again only when a check shows it
is what a new one would be (`home_pristine`, `overlay_pristine`); anything a command did to it and it is thrown
away, as every folder was before.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from framework_core.sandbox.nodes import remove_tree

from framework_core.sandbox.home import HomeView

#: The extended attribute overlayfs puts on the upper folder's root (a uuid, with `user.` inside a user
#: namespace); any other there (opaque, an ACL, one a command set) and the folder is not used again.
OVERLAY_UUID = ("user.overlay.uuid", "trusted.overlay.uuid")


class Spare:
    """One folder kept for the next command, handed out once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: Path | None = None

    def take(self) -> Path | None:
        with self._lock:
            folder, self._folder = self._folder, None
        return folder

    def keep(self, folder: Path) -> Path | None:
        """Keep `folder`; returns the one it replaces, for the caller to remove."""
        with self._lock:
            old, self._folder = self._folder, folder
        return old


#: What bubblewrap leaves in the folder bound as the home once it has made the mount points: folders it made for
#: a mount (0755), the folders holding them (0700), and empty read-only files for a file's mount (0444).
MOUNT_DIR, PARENT_DIR, MOUNT_FILE = 0o40755, 0o40700, 0o100444


def home_pristine(scratch: Path, view: HomeView) -> bool:
    """A home folder a command used is exactly what a new one is once bubblewrap has made its mount points: the
    folder itself (0700), every mount point and the folders holding them, of the type and mode bubblewrap
    makes, owned by us, with no extended attributes (ACLs), and nothing else. Such a folder can serve the next
    command instead of a new one (making and removing the mount points costs more than the command `true`);
    anything else about it, even a mode changed back and forth, and it is thrown away."""
    expected = _skeleton(view)
    uid, gid = os.geteuid(), os.getegid()

    def same(path: str, mode: int) -> bool:
        try:
            st = os.lstat(path)
            if st.st_mode != mode or st.st_uid != uid or st.st_gid != gid or os.listxattr(path, follow_symlinks=False):
                return False
        except OSError:
            return False
        return mode != MOUNT_FILE or (st.st_size == 0 and st.st_nlink == 1)

    root = str(scratch)
    if not same(root, PARENT_DIR):
        return False
    seen = 0
    folders = [""]
    while folders:
        rel_dir = folders.pop()
        try:
            names = os.listdir(os.path.join(root, rel_dir) if rel_dir else root)
        except OSError:
            return False
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            mode = expected.get(rel)
            if mode is None or not same(os.path.join(root, rel), mode):
                return False
            seen += 1
            if mode == PARENT_DIR:
                folders.append(rel)
    return seen == len(expected)


def _skeleton(view: HomeView) -> dict[str, int]:
    """What bubblewrap makes in the home folder for `view`'s mounts: relative path -> st_mode."""
    rels = {m.rel for m in view.mounts}
    expected: dict[str, int] = {}
    for m in view.mounts:
        parts = m.rel.split("/")
        parents = ["/".join(parts[:k]) for k in range(1, len(parts))]
        if any(p in rels for p in parents):
            continue  # its mount point is made inside another mount, not here
        expected[m.rel] = MOUNT_DIR if m.kind != "file" and os.path.isdir(m.source) else MOUNT_FILE
        for parent in parents:
            expected.setdefault(parent, PARENT_DIR)
    return expected


def clear_volatile(scratch: Path) -> None:
    """After a `volatile` overlay: remove the `work/work/incompat` marker overlayfs leaves (it refuses to mount
    that work folder again while the marker is there), so that an untouched overlay folder serves again."""
    inner = scratch / "work" / "work"
    marker = inner / "incompat"
    if not os.path.lexists(marker):
        return
    try:
        mode = stat.S_IMODE(os.lstat(inner).st_mode)
        os.chmod(inner, 0o700)
        for sub in (marker / "volatile", marker):
            if os.path.isdir(sub) and not os.path.islink(sub):
                os.chmod(sub, 0o700)
        remove_tree(str(marker))
        os.chmod(inner, mode)
    except OSError:
        pass  # the folder then is not as new, and is dropped


def overlay_pristine(scratch: Path, mode: int) -> bool:
    """An overlay's folder after its command, once its change set was read (and applied or declined), is as new:
    exactly `work` (with the `mode` a new one gets, holding only overlayfs's own empty `work`) and `upper`, or no
    `upper` (a transaction removes it); an `upper` left must be empty, of the same mode, with no extended
    attribute but overlayfs's uuid. All owned by us. The caller makes `upper` again where it was removed."""
    uid = os.geteuid()

    def entry(path: Path, mode: int, xattrs: tuple[str, ...] = ()) -> list[str] | None:
        try:
            st = os.lstat(path)
            if st.st_mode != mode or st.st_uid != uid or set(os.listxattr(path, follow_symlinks=False)) - set(xattrs):
                return None
            return os.listdir(path) if stat.S_ISDIR(st.st_mode) else []
        except OSError:
            return None

    names = entry(scratch, stat.S_IFDIR | 0o700)
    return (names is not None and sorted(names) in (["upper", "work"], ["work"])
            and ("upper" not in names or entry(scratch / "upper", mode, OVERLAY_UUID) == [])
            and entry(scratch / "work", mode) == ["work"]
            and entry(scratch / "work" / "work", stat.S_IFDIR) == [])
