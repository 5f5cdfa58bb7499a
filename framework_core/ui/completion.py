"""Completion for slash commands and their arguments, for @path attachments and MCP resources (@server:uri);
their expansion."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from framework_core.ui.slash import all_commands, lookup

if TYPE_CHECKING:
    from framework_core.core.facade import Facade
    from framework_core.ui.repl import Repl

AT_PATH = re.compile(r"""(?:^|(?<=\s))@(?:"([^"]+)"|'([^']+)'|((?:\\ |[^\s])+))""")
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"}


class LacaCompleter(Completer):
    def __init__(self, repl: "Repl") -> None:
        self.repl = repl

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and "\n" not in text:
            yield from self._slash(text)
            return
        word = text.split()[-1] if text and not text[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._resources(word[1:])
            yield from self._paths(word[1:])

    def _slash(self, text: str) -> Iterable[Completion]:
        name, sep, arg = text[1:].partition(" ")
        if not sep:
            for cmd in all_commands(self.repl.facade):
                for n in (cmd.name, *cmd.aliases):
                    if n.startswith(name):
                        yield Completion(n, start_position=-len(name), display_meta=cmd.help)
            return
        command = lookup(name, self.repl.facade)
        if command is None or command.complete is None:
            return
        try:
            options = command.complete(self.repl)
        except Exception:
            return
        for opt in options:
            if opt.startswith(arg.strip()):
                yield Completion(opt, start_position=-len(arg.strip()))

    def _resources(self, partial: str) -> Iterable[Completion]:
        from framework_core.ui.mcp_commands import resource_completions

        for text, shown, meta in resource_completions(self.repl.facade, partial.strip('"')):
            yield Completion(text, start_position=-len(partial), display=shown, display_meta=meta)

    def _paths(self, partial: str) -> Iterable[Completion]:
        root = self.repl.facade.workspace
        folder, _, stem = partial.rpartition("/")
        base = (root / folder) if folder else root
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries[:500]:
            if entry.name in SKIP_DIRS or not entry.name.startswith(stem):
                continue
            if entry.name.startswith(".") and not stem.startswith("."):
                continue
            rel = f"{folder}/{entry.name}" if folder else entry.name
            suffix = "/" if entry.is_dir() else ""
            shown = f'"{rel}{suffix}"' if " " in rel else rel + suffix  # a name with spaces is quoted
            yield Completion(shown, start_position=-len(partial), display=entry.name + suffix)


def _attachment_path(match: re.Match[str], text: str, workspace: Path) -> tuple[str, int]:
    """The path an @mention names (quoted, with escaped spaces, or the longest run of words naming an existing
    file: `@my file.txt`), and where the mention ends."""
    quoted = match.group(1) or match.group(2)
    if quoted:
        return quoted, match.end()
    rel = match.group(3).replace("\\ ", " ")
    end = match.end()
    if not (workspace / rel).exists():
        longer, pos, rest = rel, 0, text[end:]
        for _ in range(4):  # the next few words on the same line
            word = re.match(r"[ ]+(\S+)", rest[pos:])
            if word is None:
                break
            longer, pos = longer + " " + word.group(1), pos + word.end()
            if (workspace / longer.rstrip(".,;:!?)")).is_file():
                return longer, end + pos
    return rel, end


def expand_attachments(text: str, workspace: Path, max_bytes: int,
                       facade: "Facade | None" = None) -> tuple[str, list[str]]:
    """Append the content of each @path (a workspace file) or @server:uri (an MCP resource, with a façade) to
    the message. Returns (text, notes): every mention is accounted for (attached, cut, missing, a folder, binary
    or outside the workspace, a resource that could not be read)."""
    from framework_core.ui.mcp_commands import attach_resource, resource_mention

    notes: list[str] = []
    blocks: list[str] = []
    servers = [s.name for s in (facade.mcp_status() or [])] if facade is not None else []
    for match in AT_PATH.finditer(text):
        raw, _ = _attachment_path(match, text, workspace)
        rel = raw.rstrip(".,;:!?)") if not (match.group(1) or match.group(2)) else raw
        mention = resource_mention(rel, servers) if not (workspace / rel).exists() else None
        if mention is not None and facade is not None:
            block, note = attach_resource(facade, *mention)
            notes.append(note)
            blocks += [block] if block is not None else []
            continue
        path = (workspace / rel).resolve()
        if workspace not in path.parents and path != workspace:
            notes.append(f"@{rel} is outside the workspace; not attached")
            continue
        if path.is_dir():
            notes.append(f"@{rel} is a folder; not attached (name the files, e.g. @{rel.rstrip('/')}/…)")
            continue
        if not path.is_file():
            notes.append(f"@{rel}: no such file in the workspace; not attached (Tab completes names; quote names "
                         f'with spaces: @"my file.txt")')
            continue
        with open(path, "rb") as fh:  # only what is kept: a huge file must not be read whole
            data = fh.read(max_bytes + 1)
        size = max(path.stat().st_size, len(data))
        if b"\0" in data[:4096]:
            notes.append(f"@{rel} looks binary; not attached")
            continue
        body = data[:max_bytes].decode("utf-8", errors="replace")
        cut = ""
        if len(data) > max_bytes:
            cut = f"\n[… truncated: showing the first {max_bytes:,} of {size:,} bytes]"
            notes.append(f"@{rel} truncated to {max_bytes:,} of {size:,} bytes")
        else:
            notes.append(f"attached @{rel} ({len(data):,} bytes)")
        blocks.append(f'<file path="{rel}">\n{body}{cut}\n</file>')
    if not blocks:
        return text, notes
    return text + "\n\n" + "\n\n".join(blocks), notes
