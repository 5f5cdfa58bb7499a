"""Control paths: files inside the writable workspace that something runs later, outside any sandbox.

A git hook runs on the user's next `git commit` in their own shell; `core.hooksPath` in `.git/config` points
git at hooks elsewhere; `.laca/rules.yaml` widens LACA's own permissions; `.mcp.json` starts a server in the
next session. Commands see the existing ones read-only (an early error), and `writeFile` on any control path
always asks. What lands of a command's change set is decided by the gate (`gate.py`); this module lists the
paths to bind read-only and judges one planned write; it does no mounting.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from framework_core.sandbox.gate import LACA_FILES, Gate, Kind

GIT_PARTS: dict[str, str] = {
    "hooks": "git runs hooks on your next git command, outside any sandbox",
    "config": "git config can make git run programs (core.hooksPath, core.fsmonitor, aliases, filters) "
              "outside any sandbox",
}
SKIP_DIRS = {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", "target",
             "dist", "build", ".cache", ".git"}
SCAN_MAX_DIRS = 3000
SCAN_MAX_DEPTH = 5
READ_MAX = 1 << 20  # a file that names others (.yarnrc.yml, pyproject.toml, .envrc) is read up to this size


@dataclass(frozen=True)
class ControlPath:
    rel: str  # relative to the workspace, POSIX form
    reason: str  # what a change to it can do
    is_dir: bool


def git_dirs(workspace: Path) -> list[str]:
    """Relative paths of the `.git` folders in the workspace: its own, nested repositories' and submodules'.

    The scan is bounded (depth and folder count) so a huge tree costs milliseconds, not seconds.
    """
    found: list[str] = []
    stack: list[tuple[Path, int]] = [(workspace, 0)]
    seen = 0
    while stack and seen < SCAN_MAX_DIRS:
        folder, depth = stack.pop()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git" and entry.is_dir(follow_symlinks=False):
                git = Path(entry.path)
                found.append(git.relative_to(workspace).as_posix())
                modules = git / "modules"
                if modules.is_dir():
                    found += [m.relative_to(workspace).as_posix() for m in sorted(modules.iterdir()) if m.is_dir()]
            elif (depth < SCAN_MAX_DEPTH and entry.name not in SKIP_DIRS
                  and entry.is_dir(follow_symlinks=False)):
                stack.append((Path(entry.path), depth + 1))
    return sorted(found)


def control_paths(workspace: Path, extra: tuple[str, ...] | list[str] = ()) -> list[ControlPath]:
    """The control paths bound read-only inside the sandbox, existing or not: LACA's files, each repository's
    hooks and config, the user's `sandbox.protected_paths`. An early, clear "read-only" error for the command;
    the guarantee is the gate (`gate.py`), which judges every change before it lands."""
    out = [ControlPath(rel, why, rel == ".laca") for rel, why in LACA_FILES.items()]
    for git in git_dirs(workspace) or [".git"]:
        for part, why in GIT_PARTS.items():
            out.append(ControlPath(f"{git}/{part}", why, part == "hooks"))
    for rel in extra:
        rel = PurePosixPath(rel).as_posix().strip("/")
        if rel and ".." not in PurePosixPath(rel).parts:
            out.append(ControlPath(rel, "listed in sandbox.protected_paths", (workspace / rel).is_dir()))
    return out


def control_reason(path: Path, workspace: Path, extra: tuple[str, ...] | list[str] = (),
                   reasons: dict[str, str] | None = None) -> str | None:
    """Why writing the file `path` (absolute, resolved) would touch a control path, or None: the gate's
    judgement of that one write, the file's future contents unknown (so any git config or pointer is control)."""
    try:
        rel = PurePosixPath(path.relative_to(workspace).as_posix()).as_posix()
    except ValueError:
        return None
    if rel in ("", "."):
        return None
    tree = _PlannedWrite(workspace, rel)
    prot = tuple(p.strip("/") for p in [*extra, *(reasons or {})] if p.strip("/"))
    judged = Gate(tree, str(workspace), prot, dict(reasons or {})).judge(rel)
    return judged.reason if judged.verdict == "control" else None


def implicit_reason(path: Path, workspace: Path) -> str | None:
    """Why writing the file `path` makes something run with no program named for it (a `.pth`, a folder-open
    editor task, what `.envrc` sources: `runs_later.py`), or None."""
    try:
        rel = PurePosixPath(path.relative_to(workspace).as_posix()).as_posix()
    except ValueError:
        return None
    if rel in ("", "."):
        return None
    judged = Gate(_PlannedWrite(workspace, rel), str(workspace)).judge(rel)
    return judged.reason if judged.verdict == "runs_later" and judged.implicit else None


class _PlannedWrite:
    """The workspace as it is, with `target` about to be a file whose contents are not known yet."""

    def __init__(self, workspace: Path, target: str) -> None:
        self.workspace, self.target = workspace, target

    def kind(self, rel: str) -> Kind:
        if rel == self.target:
            return "file"
        path = self.workspace / rel if rel else self.workspace
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return "absent"
        return ("dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else
                "symlink" if stat.S_ISLNK(mode) else "other")

    def read(self, rel: str) -> bytes | None:
        if rel == self.target:
            return None  # contents unknown: a git config or pointer is judged control
        try:  # another file as it is (a .yarnrc.yml or .envrc naming the target), bounded
            with open(self.workspace / rel, "rb") as f:
                data = f.read(READ_MAX + 1)
        except OSError:
            return None
        return data if len(data) <= READ_MAX else None
