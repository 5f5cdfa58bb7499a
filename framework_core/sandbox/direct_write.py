"""Direct-write mode (no overlay): what a command made or changed is judged afterwards by the same gate as an
overlay's change set, and what is control is removed and said (see `gate.py`). Without an overlay there is no
change set to read and nothing to restore a changed control file from, so the guarantee is weaker than the
overlay's: a control file a command changed is removed, not put back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from framework_core.sandbox.control import SCAN_MAX_DIRS
from framework_core.sandbox.gate import Gate
from framework_core.sandbox.overlay_view import AfterTree
from framework_core.sandbox.walk import walk_files


def _newer(entry: os.DirEntry[str], started_ns: int) -> bool:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return max(st.st_mtime_ns, st.st_ctime_ns) > started_ns


def changed_since(workspace: Path, started_ns: int) -> list[str]:
    """Direct-write mode has no overlay to read a change set from: the files (never folders: a folder changes
    when anything in it does) a command made or changed, newer than its start, found by a bounded walk, so that
    the gate judges each as it judges an overlay's (a `.git` file, a `commondir`, a new repository's config
    pointing elsewhere, a hook)."""
    walk = walk_files(workspace, skip=("node_modules", ".venv", "objects"), max_dirs=SCAN_MAX_DIRS * 4, max_depth=64)
    out = [rel for rel, entry in walk if _newer(entry, started_ns)]
    return sorted(out, key=lambda r: (r.count("/"), r))


def remove_created(paths: list[Path], workspace: Path, protected: tuple[str, ...] = ()) -> list[str]:
    """Control paths that did not exist before a direct-write command and do now: remove them unless the gate
    (`gate.py`) judges all of it data (a new repository's config and sample hooks as `git init` writes them).
    Only writeFile, which asks every time, may create the rest."""
    gate = Gate(AfterTree(None, workspace), str(workspace), tuple(protected))
    removed = []
    for path in paths:
        if not os.path.lexists(path):
            continue
        rel = path.relative_to(workspace).as_posix()
        if _all_data(gate, workspace, rel):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(rel)
        except OSError:
            pass
    return removed


def _all_data(gate: Gate, workspace: Path, rel: str) -> bool:
    """`rel` and, for a folder, everything in it is data or runs later (never control)."""
    stack = [rel]
    while stack:
        item = stack.pop()
        if gate.judge(item).verdict == "control":
            return False
        full = workspace / item
        if full.is_dir() and not full.is_symlink():
            stack += [f"{item}/{name}" for name in os.listdir(full)]
    return True
