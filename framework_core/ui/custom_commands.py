"""Slash commands written as Markdown files, as Claude Code and Gemini CLI users keep them.

`.laca/commands/NAME.md` in the workspace and `~/.config/laca/commands/NAME.md` (the workspace's win) define
`/NAME`, and so do Claude Code's own `.claude/commands/NAME.md` and `~/.claude/commands/NAME.md`, unchanged; a file
in a folder `frontend/test.md` is `/frontend:test`. The file's text (after an optional front matter block with
`description:` and `argument-hint:`) is sent as the message, with `$ARGUMENTS` replaced by what follows the command
and `$1`, `$2`, … by its words. Nothing in the file runs (a Claude Code `!` line is text here): it becomes a
message, and whatever the model then asks for goes through the usual approvals.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

WORKSPACE_DIR = Path(".laca") / "commands"
MAX_BYTES = 64_000


@dataclass(frozen=True)
class CustomCommand:
    name: str
    path: Path
    description: str
    argument_hint: str
    body: str
    source: str  # "workspace" | "user"

    def expand(self, arguments: str) -> str:
        try:
            words = shlex.split(arguments)
        except ValueError:
            words = arguments.split()
        text = self.body.replace("$ARGUMENTS", arguments)
        text = re.sub(r"\$(\d)", lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "",
                      text)
        if arguments and "$ARGUMENTS" not in self.body and not re.search(r"\$\d", self.body):
            text = f"{text.rstrip()}\n\n{arguments}"  # arguments are never dropped silently
        return text.strip()


def command_dirs(workspace: Path) -> list[tuple[Path, str]]:
    from framework_core.config.dirs import user_config_dir

    home = Path.home()
    return [(workspace / WORKSPACE_DIR, "workspace"), (workspace / ".claude" / "commands", "workspace"),
            (user_config_dir() / "commands", "user"), (home / ".claude" / "commands", "user")]


def load_commands(workspace: Path) -> dict[str, CustomCommand]:
    """Every command file, by name; a workspace file wins over a user file of the same name."""
    found: dict[str, CustomCommand] = {}
    for folder, source in command_dirs(workspace):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.md")):
            name = ":".join(path.relative_to(folder).with_suffix("").parts)
            if name in found or not re.fullmatch(r"[\w:-]+", name):
                continue
            command = read_command(path, name, source)
            if command is not None:
                found[name] = command
    return found


def read_command(path: Path, name: str, source: str) -> CustomCommand | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    meta: dict[str, str] = {}
    if text.startswith("---\n"):
        head, sep, rest = text[4:].partition("\n---")
        if sep:
            for line in head.splitlines():
                key, _, value = line.partition(":")
                meta[key.strip().lower()] = value.strip().strip("'\"")
            text = rest.lstrip("-").lstrip("\n")
    first = next((line.strip("# ").strip() for line in text.splitlines() if line.strip()), "")
    description = meta.get("description") or first[:70] or f"from {path.name}"
    return CustomCommand(name, path, description, meta.get("argument-hint", ""), text, source)
