"""The seed's built-in tools (seed 000 §5): executeBashCommand, readFile, writeFile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools.base import ActionPreview, ToolContext, ToolSpec
from framework_core.sandbox.undo_store import UndoError
from framework_core.tools.files import resolve_in_workspace, unified_diff_preview, write_with_undo
from framework_core.wording import plural

NEW_FILE_PREVIEW_LINES = 60


def _str_arg(args: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None:
        if required:
            raise ToolArgumentError(f"missing required argument '{name}'")
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"argument '{name}' must be a string, got {type(value).__name__}")
    return value


def _path_arg(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, bool]:
    raw = _str_arg(args, "path") or ""
    if not raw.strip():
        raise ToolArgumentError("argument 'path' is empty")
    return resolve_in_workspace(raw, ctx.workspace)


# ---- executeBashCommand ---------------------------------------------------------------------------

def _bash_cwd(args: dict[str, Any], ctx: ToolContext) -> Path:
    wd = _str_arg(args, "working_directory", required=False)
    if not wd:
        return ctx.workspace
    path, inside = resolve_in_workspace(wd, ctx.workspace)
    if not inside:
        raise ToolArgumentError(f"working_directory {path} is outside the workspace {ctx.workspace}")
    if not path.is_dir():
        raise ToolArgumentError(f"working_directory {path} is not a directory")
    return path


def bash_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    command = _str_arg(args, "command") or ""
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

    command = _str_arg(args, "command") or ""
    ran = run_in_sandbox(command, ctx, cwd=_bash_cwd(args, ctx))
    out = ran.outcome
    data: dict[str, Any] = {"stdout": out.stdout, "stderr": out.stderr, "exit_code": out.exit_code,
                            "duration_s": round(out.duration_s, 3)}
    if ran.notes:
        data["sandbox"] = " ".join(ran.notes)
    if ran.changes is not None:
        data["changes"] = ran.changes
    if out.timed_out or out.stopped:  # an error to the model and on screen, with what it printed so far
        why = out.stopped or (f"timed out after {ctx.settings.command_timeout_s:g} s; its whole process group was "
                              "killed (teps_settings.command_timeout_s)")
        so_far = [f"{name}:\n{text}" for name, text in (("stdout", out.stdout), ("stderr", out.stderr)) if text]
        raise ToolError(why, details="\n".join(so_far) or "(no output before it was stopped)")
    if out.cancelled:
        data["cancelled"] = True
    if out.full_output_path:
        data["full_output_path"] = out.full_output_path
        data["output_bytes"] = out.total_bytes
    if ctx.withheld_env:
        data["env_withheld"] = ("These environment variables were withheld from the command for safety: "
                                + ", ".join(ctx.withheld_env))
    return data


# ---- readFile -----------------------------------------------------------------------------------------

def read_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    path, inside = _path_arg(args, ctx)
    notes = [] if inside else [f"reads OUTSIDE the workspace ({ctx.workspace})"]
    return ActionPreview(f"Read file {path}", "", None, notes, str(path), inside)


def read_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    path, _ = _path_arg(args, ctx)
    encoding = _str_arg(args, "encoding", required=False) or "utf-8"
    if not path.exists():
        raise ToolError(f"file not found: {path}")
    if path.is_dir():
        raise ToolError(f"{path} is a directory; list it with executeBashCommand `ls`")
    limit = ctx.settings.read_max_bytes
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if b"\0" in data[:8192]:
        raise ToolError(f"{path} looks like a binary file; not returned as text")
    try:
        text = data[:limit].decode(encoding, errors="replace")
    except LookupError:
        raise ToolArgumentError(f"unknown encoding '{encoding}'") from None
    result: dict[str, Any] = {"file_path": str(path), "content": text}
    if len(data) > limit:
        size = path.stat().st_size
        result["truncated"] = f"only the first {limit:,} of {size:,} bytes were returned"
    return result


# ---- writeFile ---------------------------------------------------------------------------------------

def _write_mode(args: dict[str, Any]) -> str:
    mode = _str_arg(args, "mode", required=False) or "w"
    if mode not in ("w", "a"):
        raise ToolArgumentError("argument 'mode' must be 'w' (overwrite) or 'a' (append)")
    return mode


def write_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    path, inside = _path_arg(args, ctx)
    content = _str_arg(args, "content")
    assert content is not None
    mode = _write_mode(args)
    notes = [] if inside else [f"writes OUTSIDE the workspace ({ctx.workspace})"]
    if path.is_file():
        old = path.read_text(encoding="utf-8", errors="replace")
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


def write_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    path, _ = _path_arg(args, ctx)
    content = _str_arg(args, "content") or ""
    encoding = _str_arg(args, "encoding", required=False) or "utf-8"
    mode = _write_mode(args)
    if path.is_dir():
        raise ToolError(f"{path} is a directory")
    try:
        data = content.encode(encoding)
    except LookupError:
        raise ToolArgumentError(f"unknown encoding '{encoding}'") from None
    try:
        written, notice = write_with_undo(path, data, append=(mode == "a"), undo=ctx.undo,
                                          label=f"writeFile {_shown(path, ctx)}")
    except OSError as exc:
        raise ToolError(f"could not write {path}: {exc.strerror}") from None
    except UndoError as exc:
        raise ToolError(f"not written: {exc} (LACA keeps the previous contents so the write can be undone)") from None
    result = {"file_path": str(path), "status": "written successfully", "bytes_written": len(data),
              "file_size": written}
    if notice:
        result["undo_note"] = notice
    return result


def _shown(path: Path, ctx: ToolContext) -> str:
    try:
        return str(path.relative_to(ctx.workspace))
    except ValueError:
        return str(path)


def builtin_tools() -> list[ToolSpec]:
    return [
        ToolSpec("executeBashCommand",
                 "Run a bash command in the user's workspace and return stdout, stderr and exit_code. Read-only "
                 "commands run at once; others need the user's approval. Output is capped (head and tail kept).",
                 {"type": "object", "properties": {
                     "command": {"type": "string", "description": "The exact bash command line to run."},
                     "working_directory": {"type": "string", "description": "Optional directory inside the workspace."}},
                  "required": ["command"]},
                 bash_handler, kind="bash", preview=bash_preview, runs_process=True),
        ToolSpec("readFile", "Read a text file (path relative to the workspace) and return its content.",
                 {"type": "object", "properties": {
                     "path": {"type": "string", "description": "File path, relative to the workspace."},
                     "encoding": {"type": "string", "description": "Text encoding, default utf-8."}},
                  "required": ["path"]},
                 read_handler, kind="read", preview=read_preview),
        ToolSpec("writeFile", "Write (mode 'w', default) or append to (mode 'a') a text file in the workspace. The "
                 "user sees a diff and approves; the write is atomic and can be undone.",
                 {"type": "object", "properties": {
                     "path": {"type": "string", "description": "File path, relative to the workspace."},
                     "content": {"type": "string", "description": "The full new content (or the text to append)."},
                     "encoding": {"type": "string", "description": "Text encoding, default utf-8."},
                     "mode": {"type": "string", "enum": ["w", "a"], "description": "'w' overwrite, 'a' append."}},
                  "required": ["path", "content"]},
                 write_handler, kind="write", preview=write_preview),
    ]
