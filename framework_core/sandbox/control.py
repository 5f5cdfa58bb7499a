"""Control paths: files inside the writable workspace that something runs later, outside any sandbox.

A git hook runs on the user's next `git commit` in their own shell; `core.hooksPath` in `.git/config` points
git at hooks elsewhere; `.laca/rules.yaml` widens LACA's own permissions; `.mcp.json` starts a server in the
next session. Commands see these read-only, and `writeFile` on them always asks. This module knows which
paths they are and what a change to each can do; it does no mounting.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: LACA's own workspace files: each widens what the next session runs or allows.
LACA_FILES: dict[str, str] = {
    ".laca": "LACA's workspace folder (rule files, custom commands): a rule here can auto-allow commands "
             "in the next session",
    ".mcp.json": "the next session will start the MCP servers named in this file",
    "framework_config.yaml": "LACA's workspace config: providers, MCP servers, tools, sandbox and permission "
                             "settings for the next session",
    "tools.yaml": "declares tools the model can call in the next session",
}
GIT_PARTS: dict[str, str] = {
    "hooks": "git runs hooks on your next git command, outside any sandbox",
    "config": "git config can make git run programs (core.hooksPath, core.fsmonitor, aliases, filters) "
              "outside any sandbox",
}
#: What other tools run on their own; extendable with `sandbox.protected_paths`.
DEFAULT_EXTRA = (".envrc",)
EXTRA_REASONS = {".envrc": "direnv runs this file when you enter the folder"}
SKIP_DIRS = {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", "target",
             "dist", "build", ".cache", ".git"}
SCAN_MAX_DIRS = 3000
SCAN_MAX_DEPTH = 5


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


def control_paths(workspace: Path, extra: tuple[str, ...] | list[str] = DEFAULT_EXTRA) -> list[ControlPath]:
    """Every control path of this workspace, existing or not (a missing one must stay missing)."""
    out = [ControlPath(rel, why, rel == ".laca") for rel, why in LACA_FILES.items()]
    for git in git_dirs(workspace) or [".git"]:
        for part, why in GIT_PARTS.items():
            out.append(ControlPath(f"{git}/{part}", why, part == "hooks"))
    for rel in extra:
        rel = PurePosixPath(rel).as_posix().strip("/")
        if rel and ".." not in PurePosixPath(rel).parts:
            out.append(ControlPath(rel, EXTRA_REASONS.get(rel, "listed in sandbox.protected_paths"),
                                   (workspace / rel).is_dir()))
    return out


def control_reason(path: Path, workspace: Path, extra: tuple[str, ...] | list[str] = DEFAULT_EXTRA) -> str | None:
    """Why `path` (absolute, resolved) is a control path, or None. Covers paths inside a control folder."""
    try:
        rel = PurePosixPath(path.relative_to(workspace).as_posix())
    except ValueError:
        return None
    parts = rel.parts
    if parts and parts[0] in LACA_FILES:
        return LACA_FILES[parts[0]]
    for i, part in enumerate(parts):
        if part == ".git" and i + 1 < len(parts):
            rest = parts[i + 1:]
            if rest[0] in GIT_PARTS:
                return GIT_PARTS[rest[0]]
            if rest[0] == "modules" and len(rest) >= 3 and rest[2] in GIT_PARTS:
                return GIT_PARTS[rest[2]]
    text = rel.as_posix()
    for item in extra:
        item = item.strip("/")
        if text == item or text.startswith(item + "/"):
            return EXTRA_REASONS.get(item, "listed in sandbox.protected_paths")
    return None


#: git config keys that make git run a program (or send credentials somewhere); a new repository's config with
#: any of them is not kept from a sandboxed command.
EXECUTING_GIT_CONFIG = re.compile(
    r"^\s*(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy|external|textconv|helper|program|"
    r"proxy|clean|smudge|process|receivepack|uploadpack|sequenceeditor|command)\s*=|^\s*\w+\s*=\s*!",
    re.I | re.M)


def new_repo_allows(rel: str, created_git_dirs: set[str], upper_file: Path) -> bool:
    """A repository the command created itself (`git init`, `git clone`) keeps its sample hooks and a config that
    runs nothing; anything else under a control path of it is dropped like any control path."""
    parts = PurePosixPath(rel).parts
    if ".git" not in parts:
        return False
    git_dir = "/".join(parts[: parts.index(".git") + 1])
    if git_dir not in created_git_dirs:
        return False
    rest = parts[parts.index(".git") + 1:]
    if rest[:1] == ("hooks",):
        return len(rest) == 1 or (len(rest) == 2 and rest[1].endswith(".sample"))
    if rest == ("config",):
        try:
            text = upper_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return not EXECUTING_GIT_CONFIG.search(text)
    return False
