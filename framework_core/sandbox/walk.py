"""A bounded walk over the workspace's files, for the scans that must stay cheap before and after every command
(the workspace's secrets, what a direct-write command changed): depth and folder count are limited, dependency
and build folders skipped, links never followed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from framework_core.sandbox.control import SCAN_MAX_DEPTH, SCAN_MAX_DIRS, SKIP_DIRS


def walk_files(workspace: Path, *, skip: Iterable[str] = SKIP_DIRS, max_dirs: int = SCAN_MAX_DIRS,
               max_depth: int = SCAN_MAX_DEPTH, folders: list[str] | None = None
               ) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(workspace-relative path, entry) of every non-folder entry within the bounds; each folder it reads (or
    tries to) is added to `folders` when given."""
    skipped = set(skip)
    stack: list[tuple[str, int]] = [("", 0)]
    seen = 0
    while stack and seen < max_dirs:
        rel_dir, depth = stack.pop()
        seen += 1
        if folders is not None:
            folders.append(rel_dir)
        try:
            entries = list(os.scandir(workspace / rel_dir if rel_dir else workspace))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                if depth < max_depth and entry.name not in skipped:
                    stack.append((rel, depth + 1))
            else:
                yield rel, entry
