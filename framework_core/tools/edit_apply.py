"""Where the edit tools' changes land: workspace paths resolved and checked, every file's change computed before
any is written, then written as one undo entry (pre-images saved and synced first, as `writeFile` does:
`files.write_with_undo`), each file atomically and beneath the workspace. A write that fails part-way puts back
the files already written, so a multi-file change lands whole or not at all.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools.base import ToolContext
from framework_core.tools.files import atomic_write, lexically_inside, resolve_in_workspace
from framework_core.tools.text_file import TextFile, load


@dataclass(frozen=True)
class Target:
    """A workspace file named by the model: its real path, its path beneath the workspace, how it is shown."""

    path: Path
    rel: str
    shown: str

    @property
    def key(self) -> str:
        return str(self.path)


@dataclass
class FileChange:
    target: Target
    before: TextFile | None  # None: the file is created
    after: bytes | None  # None: the file is deleted
    added: int = 0
    removed: int = 0
    mode: int | None = None  # for a file made by a move: the mode of the file it came from
    diff: str = ""


def target(raw: str, ctx: ToolContext, tool: str) -> Target:
    """The workspace file `raw` names; ToolArgumentError for an empty path, one outside the workspace, or one
    that a symlink leads out of it."""
    if not raw.strip():
        raise ToolArgumentError("the path is empty")
    rel = lexically_inside(raw, ctx.workspace)
    path, inside = resolve_in_workspace(raw, ctx.workspace)
    if rel is None or not inside:
        why = "leads outside the workspace through a symlink" if rel is not None else "is outside the workspace"
        raise ToolArgumentError(f"{raw} {why} ({ctx.workspace}); {tool} changes only files inside it")
    if rel in (".", ""):
        raise ToolArgumentError(f"{raw} is the workspace itself, not a file")
    return Target(path, rel, rel)


def read_for_edit(t: Target, ctx: ToolContext, encoding: str | None = None) -> TextFile:
    """The file's text, refused when the model has not read it in this session or it changed since."""
    text = load(ctx.workspace, t.rel, t.shown, encoding)
    stale = ctx.reads.stale(t.key, text.digest, t.shown)
    if stale:
        raise ToolError(stale)
    return text


def unified(before: str, after: str, shown: str, *, old: str | None = None, new: str | None = None) -> str:
    """The unified diff of one file (3 lines of context), whole: the approval panel folds it, never cuts it.
    `old` and `new` name the sides when they differ from `a/SHOWN` and `b/SHOWN` (a file made, gone, moved)."""
    a = [line.rstrip("\r\n") for line in before.splitlines()]
    b = [line.rstrip("\r\n") for line in after.splitlines()]
    lines = list(difflib.unified_diff(a, b, old or f"a/{shown}", new or f"b/{shown}", lineterm=""))
    return "\n".join(lines)


def counts(changes: list[FileChange]) -> tuple[int, int]:
    return sum(c.added for c in changes), sum(c.removed for c in changes)


def land(changes: list[FileChange], ctx: ToolContext, label: str, tool: str) -> str | None:
    """Write every change as one undo entry; returns the undo store's notice. ToolError, with nothing changed,
    when a pre-image cannot be saved or a write fails (the files already written are put back)."""
    from framework_core.sandbox.undo_store import UndoError

    entry = ctx.undo.begin(label, "writeFile") if ctx.undo is not None else None
    try:
        if entry is not None:
            for c in changes:
                entry.save_preimage(c.target.path)
            entry.prepare()
    except (UndoError, OSError) as exc:
        if entry is not None:
            entry.discard()
        raise ToolError(f"nothing changed: {exc} (LACA keeps the previous contents so the change can be undone)") \
            from None
    done: list[FileChange] = []
    try:
        for c in changes:
            _write(c, ctx)
            done.append(c)
    except OSError as exc:
        left = _put_back(done, ctx)
        if entry is not None:
            entry.discard()
        failed = changes[len(done)].target.shown
        raise ToolError(f"could not write {failed}: {exc.strerror or exc}; "
                        + ("every file is as it was" if not left else f"COULD NOT PUT BACK {', '.join(left)}")) \
            from None
    for c in changes:  # the model knows what it wrote
        if c.after is None:
            ctx.reads.forget(c.target.key)
        else:
            ctx.reads.saw(c.target.key, c.after, tool)
    return entry.commit() if entry is not None else None


def _write(c: FileChange, ctx: ToolContext) -> None:
    from framework_core.tools.safe_open import NotRegular, OutsideWorkspace

    try:
        if c.after is None:
            _unlink(c.target, ctx)
            return
        atomic_write(c.target.path, c.after, root=ctx.workspace)
        if c.mode is not None:
            os.chmod(c.target.path, stat.S_IMODE(c.mode))  # the file just written, regular
    except OutsideWorkspace:
        raise OSError(0, "it now leads outside the workspace (a symlink changed since it was checked)") from None
    except NotRegular as exc:
        raise OSError(0, f"it is {exc.what} now") from None


def _unlink(t: Target, ctx: ToolContext) -> None:
    from framework_core.tools import safe_open as so

    parent, name = os.path.split(t.rel)
    fd = so.open_beneath(ctx.workspace, parent or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            raise so.NotRegular(t.shown, so.kind_of(st.st_mode))
        os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def _put_back(done: list[FileChange], ctx: ToolContext) -> list[str]:
    """Undo the writes of a change that failed part-way, newest first; the paths that could not be put back."""
    left = []
    for c in reversed(done):
        try:
            if c.before is None:
                _unlink(c.target, ctx)
            else:
                atomic_write(c.target.path, c.before.raw, root=ctx.workspace)
        except OSError:
            left.append(c.target.shown)
    return left
