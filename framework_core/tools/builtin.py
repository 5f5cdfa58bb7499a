"""The built-in tools: executeBashCommand, readFile, writeFile (stable names: docs/ARCHITECTURE.md)."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Any

from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools.base import ActionPreview, ToolContext, ToolRegistry, ToolSpec
from framework_core.sandbox.undo_store import UndoError
from framework_core.tools.files import (lexically_inside, resolve_in_workspace, unified_diff_preview,
                                        write_with_undo)
from framework_core.wording import plural

NEW_FILE_PREVIEW_LINES = 60


# Types, required and unknown arguments, enums and bounds are checked against the schemas below before a
# handler or previewer is called (tools/arguments.py); what is left here is what a schema cannot say.

def _path_arg(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, bool]:
    raw: str = args.get("path") or ""
    if not raw.strip():
        raise ToolArgumentError("argument 'path' is empty")
    path, inside = resolve_in_workspace(raw, ctx.workspace)
    if not inside and lexically_inside(raw, ctx.workspace) is not None:
        raise ToolArgumentError(f"{raw} leads outside the workspace through a symlink (to {path}); the file tools "
                                "do not follow it there. Name that path itself if you mean it (LACA asks first).")
    return path, inside


def _beneath(args: dict[str, Any], ctx: ToolContext, path: Path, inside: bool) -> tuple[Path | None, str]:
    """(the root to open beneath, the path relative to it), or (None, the absolute path) outside the workspace.
    What names a place in the workspace is opened beneath it, so a symlink swapped in meanwhile is not followed
    out (framework_core/tools/safe_open.py)."""
    rel = lexically_inside(str(args.get("path") or ""), ctx.workspace)
    if rel is None and inside:
        rel = os.path.relpath(path, os.path.realpath(ctx.workspace))
    return (ctx.workspace, rel) if rel is not None else (None, str(path))


# ---- executeBashCommand ---------------------------------------------------------------------------

def _bash_cwd(args: dict[str, Any], ctx: ToolContext) -> Path:
    wd = args.get("working_directory")
    if not wd:
        return ctx.workspace
    path, inside = resolve_in_workspace(wd, ctx.workspace)
    if not inside:
        raise ToolArgumentError(f"working_directory {path} is outside the workspace {ctx.workspace}")
    if not path.is_dir():
        raise ToolArgumentError(f"working_directory {path} is not a directory")
    return path


def bash_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    command: str = args.get("command") or ""
    if not command.strip():
        raise ToolArgumentError("argument 'command' is empty")
    from framework_core.tools.interactive import needs_terminal

    no_tty = needs_terminal(command)  # refused before anyone is asked: it could only wait out the timeout
    if no_tty:
        raise ToolArgumentError(no_tty)
    cwd = _bash_cwd(args, ctx)
    notes = [f"runs in {cwd}"] if cwd != ctx.workspace else []
    return ActionPreview("Run command", command, "bash", notes)


def bash_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    from framework_core.tools.execute import run_in_sandbox

    command: str = args.get("command") or ""
    ran = run_in_sandbox(command, ctx, cwd=_bash_cwd(args, ctx))
    out = ran.outcome
    data = ran.result_data()
    if out.full_output_path:  # for the screen; the model reads the marker in the output
        data["full_output_path"] = out.full_output_path
        data["output_bytes"] = out.total_bytes
    withheld = _withheld_for(command, ctx.withheld_env)
    if withheld:
        data["env_withheld"] = "withheld from commands for safety: " + ", ".join(withheld)
    if out.timed_out or out.stopped:  # an error to the model and on screen, with what it printed so far
        why = out.stopped or (f"timed out after {ctx.settings.command_timeout_s:g} s; its whole process group was "
                              "killed (teps_settings.command_timeout_s)")
        raise ToolError(why, data=data)
    ran.raise_if_not_applied(data)
    return data


def _withheld_for(command: str, withheld: tuple[str, ...]) -> list[str]:
    """The withheld variables this command names (or all, when it prints the environment): said only then,
    not with every result."""
    if re.search(r"(^|[\s;|&(])(env|printenv|export|set|declare)([\s;|&)]|$)", command):
        return list(withheld)
    return [name for name in withheld if re.search(rf"\b{re.escape(name)}\b", command)]


# ---- readFile -----------------------------------------------------------------------------------------

def _read_path(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, bool, bool]:
    """(real path, inside the workspace, one of this session's saved outputs)."""
    path, inside = _path_arg(args, ctx)
    return path, inside, not inside and ctx.saved_output(path)


def read_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    path, inside, saved = _read_path(args, ctx)
    notes = [] if inside or saved else [f"reads OUTSIDE the workspace ({ctx.workspace})"]
    what = "saved output" if saved else "file"
    return ActionPreview(f"Read {what} {path}", "", None, notes, str(path), inside, saved_output=saved)


def read_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    from framework_core.tools.result_budget import RangeError, bound_file

    path, inside, saved = _read_path(args, ctx)
    offset = int(args.get("offset") or 1)  # JSON Schema counts 3.0 as an integer
    limit = int(args["limit"]) if args.get("limit") is not None else None
    encoding = _read_encoding(args)
    fd = _open_read(args, ctx, path, inside, saved)
    try:
        if b"\0" in os.pread(fd, 8192, 0):
            raise ToolError(f"{path} looks like a binary file; not returned as text")
        shown = str(args.get("path")) if inside else str(path)
        # the descriptor's own file, whatever the path names by now (by its path only where /proc is missing)
        source = f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else path
        view = bound_file(source, ctx.result_budget(), offset=offset, limit=limit, shown_path=shown,
                          encoding=encoding, numbered=args.get("line_numbers") is True)
        if inside:
            _note_read(fd, path, ctx)
    except RangeError as exc:
        raise ToolArgumentError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"could not read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    total = view.total_lines or 0
    last = min(offset + limit - 1, total) if limit else total
    data: dict[str, Any] = {"file_path": str(path), "content": view.text, "total_lines": total,
                            "lines": f"lines {offset:,}-{last:,} of {total:,}" if total else "empty file"}
    if view.cut:
        data["cut"] = "cut: " + view.summary()
    return data


def _note_read(fd: int, path: Path, ctx: ToolContext) -> None:
    """Record what the model saw of a workspace file (its bytes' digest), for the edit tools' stale check."""
    import hashlib

    from framework_core.tools.text_file import MAX_EDIT_BYTES

    if os.fstat(fd).st_size > MAX_EDIT_BYTES:
        return  # the edit tools refuse it anyway
    digest, at = hashlib.sha256(), 0
    while chunk := os.pread(fd, 1 << 20, at):
        digest.update(chunk)
        at += len(chunk)
    ctx.reads.saw(str(path), digest.hexdigest())


def _open_read(args: dict[str, Any], ctx: ToolContext, path: Path, inside: bool, saved: bool) -> int:
    """A descriptor of the regular file to read; a folder, FIFO, device or a path leading out is an error at
    once (a FIFO is opened without waiting for a writer)."""
    from framework_core.tools.safe_open import NotRegular, OutsideWorkspace, open_for_reading

    root, rel = _beneath(args, ctx, path, inside)
    try:
        return open_for_reading(root, rel)
    except FileNotFoundError:
        gone = " (saved outputs are kept only while their session runs)" if saved else ""
        raise ToolError(f"file not found: {path}{gone}") from None
    except NotRegular as exc:
        if exc.what == "a directory":
            raise ToolError(f"{path} is a directory; list it with executeBashCommand `ls`") from None
        raise ToolError(f"{path} is {exc.what}; readFile reads only regular files") from None
    except OutsideWorkspace:
        raise ToolError(f"{args.get('path')} now leads outside the workspace (a symlink changed since it was "
                        "checked); not read") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise ToolError(f"{path} is a directory; list it with executeBashCommand `ls`") from None
        raise ToolError(f"could not read {path}: {exc.strerror or exc}") from None


def _read_encoding(args: dict[str, Any]) -> str:
    import codecs

    encoding: str = args.get("encoding") or "utf-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ToolArgumentError(f"unknown encoding '{encoding}'") from None
    if "\n".encode(encoding, errors="replace") != b"\n":
        raise ToolArgumentError(f"readFile reads text whose lines end in ASCII newlines; '{encoding}' does not "
                                "(convert the file with iconv first)")
    return encoding


# ---- writeFile ---------------------------------------------------------------------------------------

def write_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    path, inside = _path_arg(args, ctx)
    content: str = args["content"]
    mode: str = args.get("mode") or "w"
    notes = [] if inside else [f"writes OUTSIDE the workspace ({ctx.workspace})"]
    old = _old_text(args, ctx, path, inside)
    if old is not None:
        new = old + content if mode == "a" else content
        verb = "Append to" if mode == "a" else "Overwrite"
        shown = str(path.relative_to(ctx.workspace.resolve())) if inside else str(path)
        return ActionPreview(f"{verb} file {path}", unified_diff_preview(old, new, shown), "diff", notes,
                             str(path), inside)
    lines = content.splitlines()
    body = "\n".join(lines[:NEW_FILE_PREVIEW_LINES])
    if len(lines) > NEW_FILE_PREVIEW_LINES:
        body += f"\n… {len(lines) - NEW_FILE_PREVIEW_LINES} more lines ({len(lines)} in all)"
    return ActionPreview(f"Create file {path} ({plural(len(lines), 'line')})", body, None, notes, str(path), inside)


def _old_text(args: dict[str, Any], ctx: ToolContext, path: Path, inside: bool) -> str | None:
    """The text a write would replace (None: no regular file there), read as the write will reach it."""
    from framework_core.tools.safe_open import open_for_reading

    root, rel = _beneath(args, ctx, path, inside)
    try:
        fd = open_for_reading(root, rel)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")


def write_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    path, inside = _path_arg(args, ctx)
    content: str = args.get("content") or ""
    encoding: str = args.get("encoding") or "utf-8"
    mode: str = args.get("mode") or "w"
    if path.is_dir():
        raise ToolError(f"{path} is a directory")
    try:
        data = content.encode(encoding)
    except LookupError:
        raise ToolArgumentError(f"unknown encoding '{encoding}'") from None
    from framework_core.tools.safe_open import NotRegular, OutsideWorkspace

    root, _ = _beneath(args, ctx, path, inside)
    try:
        written, notice = write_with_undo(path, data, append=(mode == "a"), undo=ctx.undo,
                                          label=f"writeFile {_shown(path, ctx)}", root=root)
    except OutsideWorkspace:
        raise ToolError(f"{args.get('path')} now leads outside the workspace (a symlink changed since it was "
                        "checked); not written") from None
    except NotRegular as exc:
        raise ToolError(f"{path} is {exc.what}; writeFile writes only regular files") from None
    except OSError as exc:
        raise ToolError(f"could not write {path}: {exc.strerror}") from None
    except UndoError as exc:
        raise ToolError(f"not written: {exc} (LACA keeps the previous contents so the write can be undone)") from None
    verb = "Appended" if mode == "a" else "Wrote"
    result = {"file_path": str(path), "status": "written successfully", "bytes_written": len(data),
              "file_size": written, "message": f"{verb} {plural(len(data), 'byte')} to {_shown(path, ctx)}"
                                               + (f"; it now has {plural(written, 'byte')}." if mode == "a" else ".")}
    if notice:
        result["undo_note"] = notice
    if mode != "a" and inside:
        ctx.reads.saw(str(path), data, "writeFile")  # the model knows what it wrote
    return result


def _shown(path: Path, ctx: ToolContext) -> str:
    try:
        return str(path.relative_to(ctx.workspace))
    except ValueError:
        return str(path)


def builtin_registry() -> ToolRegistry:
    """A registry holding the built-in tools: where every registry starts."""
    registry = ToolRegistry()
    for spec in builtin_tools():
        registry.register(spec)
    return registry


def builtin_tools() -> list[ToolSpec]:
    from framework_core.tools.apply_patch import patch_tool
    from framework_core.tools.edit_file import edit_tool

    return [
        ToolSpec("executeBashCommand",
                 "Run a bash command in the workspace. Read-only commands run at once; others need the user's "
                 "approval. Long output is cut to its head and tail; read the cut part with readFile.",
                 {"type": "object", "properties": {
                     "command": {"type": "string", "description": "The bash command line."},
                     "working_directory": {"type": "string", "description": "A directory inside the workspace."}},
                  "required": ["command"], "additionalProperties": False},
                 bash_handler, kind="bash", preview=bash_preview, runs_process=True),
        ToolSpec("readFile", "Read a text file, or the part of a cut output that a result names. A long file is "
                 "cut to its head and tail; read any part with offset and limit.",
                 {"type": "object", "properties": {
                     "path": {"type": "string", "description": "File path, relative to the workspace."},
                     "offset": {"type": "integer", "minimum": 1, "description": "First line to read (from 1)."},
                     "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read."},
                     "encoding": {"type": "string", "description": "Text encoding, default utf-8."},
                     "line_numbers": {"type": "boolean"}},
                  "required": ["path"], "additionalProperties": False},
                 read_handler, kind="read", preview=read_preview),
        ToolSpec("writeFile", "Write (mode 'w', default) or append to (mode 'a') a text file in the workspace (for "
                 "an existing file, editFile). The user sees a diff and approves; the write can be undone.",
                 {"type": "object", "properties": {
                     "path": {"type": "string", "description": "File path, relative to the workspace."},
                     "content": {"type": "string", "description": "The full new content (or the text to append)."},
                     "encoding": {"type": "string", "description": "Text encoding, default utf-8."},
                     "mode": {"type": "string", "enum": ["w", "a"], "description": "'w' overwrite, 'a' append."}},
                  "required": ["path", "content"], "additionalProperties": False},
                 write_handler, kind="write", preview=write_preview),
        edit_tool(),
        patch_tool(),
    ]
