"""Which programs the workspace repository's git configuration makes reading commands run (core.fsmonitor,
textconv and external diff drivers, clean filters, includes), for the policy's `CallFacts.git_runs`. Reads the
config git would (`.git/config`, or the git directory a `.git` file names and its common directory); the keys
are picked by `gitconfig.read_time_programs`."""

from __future__ import annotations

from pathlib import Path

from framework_core.sandbox.gitconfig import read_time_programs

MAX_CONFIG = 1 << 20


def _read(path: Path) -> bytes | None:
    try:
        if not path.is_file():
            return b""
        with path.open("rb") as f:
            data = f.read(MAX_CONFIG + 1)
    except OSError:
        return None
    return None if len(data) > MAX_CONFIG else data


def _git_dirs(workspace: Path) -> list[Path]:
    dot = workspace / ".git"
    if dot.is_dir():
        return [dot]
    text = _read(dot)
    if not text or not text.startswith(b"gitdir:"):
        return []
    gitdir = Path(text[7:].decode("utf-8", "replace").strip())
    gitdir = gitdir if gitdir.is_absolute() else (workspace / gitdir)
    common = _read(gitdir / "commondir")
    dirs = [gitdir]
    if common:
        c = Path(common.decode("utf-8", "replace").strip())
        dirs.append(c if c.is_absolute() else gitdir / c)
    return dirs


def workspace_git_runs(workspace: Path) -> tuple[str, ...]:
    """The keys, empty for a workspace that is no repository or whose config names no such program. A config
    LACA cannot read counts as naming one."""
    found: list[str] = []
    for d in _git_dirs(workspace):
        text = _read(d / "config")
        found += read_time_programs(text) if text is not None else ["an unreadable configuration"]
    return tuple(dict.fromkeys(found))
