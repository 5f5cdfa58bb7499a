"""editFile: replace one exact string in a workspace file (or every occurrence, with `replace_all`).

Refused, with a result the model can act on, when the string is absent (the nearest line is named), found more
than once without `replace_all` (the count and the lines), or when the file was not read in this session or
changed on disk since (framework_core/tools/read_record.py). The file keeps its encoding, line endings, final
newline and mode (framework_core/tools/text_file.py). A write like `writeFile`: the policy judges its path, the
approval shows the diff, and the change is one undo entry (framework_core/tools/edit_apply.py).
"""

from __future__ import annotations

import re
from typing import Any

from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools.base import ActionPreview, ToolContext, ToolSpec
from framework_core.tools.edit_apply import FileChange, land, read_for_edit, target, unified
from framework_core.tools.patch_match import nearest_line, seek
from framework_core.tools.text_file import in_file_style, keep_final_newline
from framework_core.wording import plural

NUMBERED = re.compile(r"^\s*\d+\t")
MAX_LINES_LISTED = 10


def plan(args: dict[str, Any], ctx: ToolContext) -> tuple[FileChange, int, int]:
    """(the change, how many occurrences it replaces, the line of the first); ToolArgumentError / ToolError
    when it may not be made."""
    t = target(str(args.get("path") or ""), ctx, "editFile")
    old, new = str(args.get("old_string") or ""), str(args.get("new_string") or "")
    if not old:
        raise ToolArgumentError("old_string is empty; create a file with writeFile, or add text by replacing a "
                                "line next to it")
    if old == new:
        raise ToolArgumentError("old_string and new_string are the same; nothing would change")
    before = read_for_edit(t, ctx, args.get("encoding"))
    text, nl = before.text, before.newline
    wanted = _find(text, old, nl)
    if wanted is None and _numbered(old):  # lines copied from readFile with their numbers
        wanted = _find(text, _unnumbered(old), nl)
        new = _unnumbered(new) if wanted is not None and _numbered(new) else new
    if wanted is None:
        raise ToolError(_absent(text, old, t.shown))
    starts = [m.start() for m in re.finditer(re.escape(wanted), text)]
    lines = [text.count("\n", 0, s) + 1 for s in starts]
    if len(starts) > 1 and not args.get("replace_all"):
        listed = ", ".join(map(str, lines[:MAX_LINES_LISTED])) + (" …" if len(lines) > MAX_LINES_LISTED else "")
        raise ToolError(f"old_string is found {len(starts)} times in {t.shown} (at lines {listed}); include more of "
                        "the lines around the one you mean so it is found once, or set replace_all to change "
                        "every one")
    replacement = in_file_style(new, nl) if "\n" in new else new
    after = text.replace(wanted, replacement) if args.get("replace_all") else text.replace(wanted, replacement, 1)
    after = keep_final_newline(text, after, nl)
    diff = unified(text, after, t.shown)
    added = sum(1 for line in diff.splitlines()[2:] if line.startswith("+"))
    removed = sum(1 for line in diff.splitlines()[2:] if line.startswith("-"))
    change = FileChange(t, before, before.encode(after), added, removed, diff=diff)
    return change, len(starts), lines[0]


def _find(text: str, old: str, newline: str) -> str | None:
    """`old` as it is in the file: as given, or with the file's line endings."""
    return next((w for w in dict.fromkeys((old, in_file_style(old, newline))) if w in text), None)


def _numbered(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(NUMBERED.match(line) for line in lines)


def _unnumbered(text: str) -> str:
    return "\n".join(NUMBERED.sub("", line, count=1) for line in text.split("\n"))


def _absent(text: str, old: str, shown: str) -> str:
    """Why old_string is not in the file, with what is there that is most like it."""
    olds = [line.rstrip("\r") for line in (_unnumbered(old) if _numbered(old) else old).split("\n")]
    texts = [line.rstrip("\r") for line in text.split("\n")]
    found = seek(texts, olds)
    if found is not None:
        return (f"old_string is not in {shown} as written; it is at line {found[0] + 1} only when read "
                f"{found[1]}. Copy the text exactly as readFile shows it")
    first = next((line for line in olds if line.strip()), olds[0])
    near = nearest_line(texts, first)
    where = f"; the nearest line is {near[0] + 1}: {near[1].strip()[:200]!r}" if near else ""
    return f"old_string is not in {shown}{where}. Read the file again and copy the text exactly"


def edit_preview(args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
    change, count, line = plan(args, ctx)
    t = change.target
    many = f", {count} places" if count > 1 else ""
    return ActionPreview(f"Edit file {t.shown} (+{change.added} −{change.removed}{many})", change.diff, "diff", [],
                         str(t.path), True)


def edit_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    change, count, line = plan(args, ctx)
    notice = land([change], ctx, f"editFile {change.target.shown}", "editFile")
    where = f"{count} places from line {line}" if count > 1 else f"line {line}"
    result: dict[str, Any] = {
        "file_path": str(change.target.path),
        "message": f"Edited {change.target.shown} at {where}: {plural(change.added, 'line')} added, "
                   f"{change.removed} removed."}
    if notice:
        result["undo_note"] = notice
    return result


def edit_tool() -> ToolSpec:
    return ToolSpec(
        "editFile",
        "Replace old_string (exact, found once unless replace_all) with new_string in a file you read; sends only "
        "the change, so prefer it to writeFile.",
        {"type": "object", "properties": {
            "path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"}, "encoding": {"type": "string"}},
         "required": ["path", "old_string", "new_string"], "additionalProperties": False},
        edit_handler, kind="write", preview=edit_preview)
