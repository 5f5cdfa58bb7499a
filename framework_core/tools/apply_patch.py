"""applyPatch: one patch (framework_core/tools/patch_format.py) applied to several workspace files as one change.

Every hunk of every file is matched (framework_core/tools/patch_match.py) before anything is written; a hunk
that does not match refuses the whole patch, naming the file, the hunk and what the file holds instead. A file
updated, moved or deleted must have been read in this session and be unchanged since (as for `editFile`); a
file added must not exist yet. The files land as one undo entry (framework_core/tools/edit_apply.py), so
`/undo` restores every one of them.
"""

from __future__ import annotations

import os
from typing import Any

from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools.base import ActionPreview, ToolContext, ToolSpec
from framework_core.tools.edit_apply import FileChange, Target, counts, land, read_for_edit, target, unified
from framework_core.tools.patch_format import FileOp, PatchError, parse
from framework_core.tools.patch_match import HunkMismatch, apply_hunks, join_lines, split_lines
from framework_core.tools.text_file import load
from framework_core.wording import plural

TOOL = "applyPatch"


def plan(args: dict[str, Any], ctx: ToolContext) -> list[FileChange]:
    """Every file's change, all matched; ToolArgumentError for a patch that cannot be read, ToolError for one
    that does not fit the files."""
    try:
        ops = parse(str(args.get("patch") or ""))
    except PatchError as exc:
        raise ToolArgumentError(f"the patch cannot be read: {exc}. Nothing was changed") from None
    changes: list[FileChange] = []
    for op in ops:
        changes += _change(op, ctx)
    seen: dict[str, str] = {}
    for c in changes:
        if c.target.key in seen:
            raise ToolArgumentError(f"{c.target.shown} and {seen[c.target.key]} are the same file; put every change "
                                    "to it in one Update. Nothing was changed")
        seen[c.target.key] = c.target.shown
    return changes


def _change(op: FileOp, ctx: ToolContext) -> list[FileChange]:
    t = target(op.path, ctx, TOOL)
    if op.action == "add":
        _absent(t, "Add File")
        text = "".join(line + "\n" for line in op.lines)
        return [FileChange(t, None, text.encode("utf-8"), len(op.lines), 0,
                           diff=unified("", text, t.shown, old="/dev/null"))]
    if op.action == "delete":
        before = load(ctx.workspace, t.rel, t.shown)
        lines = len(before.text.splitlines())
        return [FileChange(t, before, None, 0, lines, diff=unified(before.text, "", t.shown, new="/dev/null"))]
    before = read_for_edit(t, ctx)
    try:
        out, added, removed = apply_hunks(split_lines(before.text), op.hunks, before.newline)
    except HunkMismatch as exc:
        at = op.hunks[exc.hunk - 1].line
        raise ToolError(f"the Update of {t.shown}: hunk {exc.hunk} (patch line {at}) does not match: {exc.why}. "
                        "Nothing was changed (a patch lands whole or not at all); read the file again and send "
                        "the patch with its lines as the file has them") from None
    text = join_lines(out)
    if op.move_to is None:
        return [FileChange(t, before, before.encode(text), added, removed, diff=unified(before.text, text, t.shown))]
    dest = target(op.move_to, ctx, TOOL)
    if dest.key != t.key:
        _absent(dest, "Move to")
    mode = os.stat(t.path).st_mode
    moved = FileChange(dest, None, before.encode(text), added, removed, mode=mode,
                       diff=unified(before.text, text, t.shown, old=f"a/{t.shown}", new=f"b/{dest.shown}"))
    return [FileChange(t, before, None), moved] if dest.key != t.key else [moved]


def _absent(t: Target, what: str) -> None:
    if os.path.lexists(t.path):
        raise ToolError(f"{what}: {t.shown} already exists; change it with '*** Update File: {t.shown}'. Nothing "
                        "was changed")


def _summary(changes: list[FileChange]) -> str:
    parts = []
    for c in changes:
        if c.after is None and c.diff:
            parts.append(f"deleted {c.target.shown} (−{c.removed})")
        elif c.after is None:
            continue  # the source of a move: said with its destination
        elif c.before is None and c.mode is None:
            parts.append(f"added {c.target.shown} (+{c.added})")
        else:
            verb = "moved to" if c.mode is not None else "updated"
            parts.append(f"{verb} {c.target.shown} (+{c.added} −{c.removed})")
    return "; ".join(parts)


def patch_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    changes = plan(args, ctx)
    added, removed = counts(changes)
    files = [c for c in changes if c.diff]
    title = (f"Apply patch to {plural(len(files), 'file')} (+{added} −{removed})" if len(files) > 1
             else f"Apply patch: {_summary(changes)}")
    body = "\n".join(c.diff or f"(no change to the text of {c.target.shown})" for c in files)
    paths = [str(c.target.path) for c in changes]
    return ActionPreview(title, body, "diff", [], paths[0], True, paths=paths if len(paths) > 1 else [])


def patch_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    changes = plan(args, ctx)
    added, removed = counts(changes)
    files = len([c for c in changes if c.diff or c.after is not None])
    notice = land(changes, ctx, f"applyPatch {', '.join(c.target.shown for c in changes)}"[:200], TOOL)
    result: dict[str, Any] = {
        "file_path": str(changes[0].target.path),
        "message": f"Applied the patch to {plural(files, 'file')}, {plural(added, 'line')} added and {removed} "
                   f"removed: {_summary(changes)}."}
    if notice:
        result["undo_note"] = notice
    return result


def patch_tool() -> ToolSpec:
    return ToolSpec(
        TOOL,
        "Edit files you read as one change, in the apply_patch format: *** Begin Patch, then *** Add File: P "
        "(+lines), *** Update File: P (optional *** Move to: Q, @@ hunks of ' ', - and + lines found by context), "
        "*** Delete File: P, then *** End Patch. Every hunk matches or nothing lands.",
        {"type": "object", "properties": {"patch": {"type": "string"}},
         "required": ["patch"], "additionalProperties": False},
        patch_handler, kind="write", preview=patch_preview)
