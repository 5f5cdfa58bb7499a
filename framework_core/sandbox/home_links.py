"""Files of the workspace that the home links to: a dotfiles repository checked out as the workspace, with
`~/.bashrc -> ~/dotfiles/bashrc`, `~/.config/nvim -> ~/dotfiles/nvim`, `~/.local/bin/tool -> ...`. The user's
shell, editor or PATH runs them later, outside the sandbox, so what a command changes there is not data: the gate
treats these paths as control paths (`gate.py`), said with the link that makes them so.

The scan reads only the home's own links, where such links live: the home's top level, `~/.config/*` and
`~/.local/bin/*` (bounded), and follows each to see whether it lands inside the workspace.
"""

from __future__ import annotations

import os
from pathlib import Path

LINK_FOLDERS = ("", ".config", ".local/bin", ".local/share/applications", ".config/autostart")
MAX_ENTRIES = 2000


def home_links(home: Path, workspace: Path) -> dict[str, str]:
    """{workspace-relative path: why} for every link in the home's link folders that resolves into the workspace
    (a linked folder covers everything under it)."""
    ws = os.path.realpath(workspace)
    found: dict[str, str] = {}
    seen = 0
    for folder in LINK_FOLDERS:
        base = home / folder if folder else home
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return found
            if not entry.is_symlink():
                continue
            target = os.path.realpath(entry.path)
            if target != ws and target.startswith(ws + "/"):
                rel = target[len(ws) + 1:]
                shown = "~/" + (f"{folder}/" if folder else "") + entry.name
                found.setdefault(rel, f"your home links {shown} here: your shell or tools run it from there, "
                                      "outside the sandbox")
    return found
