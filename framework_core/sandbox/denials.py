"""Say plainly when a command failed because the sandbox stopped it, so the model and the user know why.

Pure: reads a command's stderr and what its sandbox allowed. The notes go into the tool result and on screen.
"""

from __future__ import annotations

import re
from pathlib import Path

NO_NETWORK = re.compile(r"Could not resolve host|Temporary failure in name resolution|Name or service not known|"
                        r"Network is unreachable|getaddrinfo|No address associated with hostname|"
                        r"Failed to establish a new connection|Connection refused|nodename nor servname", re.I)
WRITE_FAILED = re.compile(r"Read-only file system|Device or resource busy|Permission denied|"
                          r"Operation not permitted|could not (?:write|lock|open)", re.I)
PRIVATE_TMP = re.compile(r"(?:/var)?/tmp/\S*.*No such file or directory")
WORKTREE_OUTSIDE = re.compile(r"could not create leading directories of '([^']+?)/\.git'.*Read-only file system")
PATHISH = re.compile(r"(?:^|[\s'\"`(])((?:/|\./|\.\./)?[\w.@+-]+(?:/[\w.@+-]+)*)")


def explain(stderr: str, *, workspace: Path, mode: str | None, network: bool,
            control: dict[str, str], profile: str) -> list[str]:
    """Notes for a failed sandboxed command; `control` maps each control path (relative) to its reason."""
    if mode is None:
        return []
    notes: list[str] = []
    if stderr.lstrip().startswith("bwrap:"):
        first = stderr.strip().splitlines()[0]
        return [f"the sandbox could not start this command ({first}); nothing ran"]
    hit = _protected_hit(stderr, workspace, control) if mode != "read-only" else None
    if hit is not None:
        rel, why = hit
        notes.append(f"{rel} is a protected control path and stays read-only inside the sandbox ({why}). "
                     "The user can change it themselves, or approve a writeFile of it (asked every time).")
    elif mode != "read-only" and (worktree := WORKTREE_OUTSIDE.search(stderr)):
        notes.append(f"a git worktree at {worktree.group(1)} is outside the workspace ({workspace}), which "
                     "commands cannot change: it does not exist and cannot land; make it inside the workspace "
                     "instead (for example `git worktree add worktrees/NAME`)")
    elif "Read-only file system" in stderr:
        notes += _read_only(stderr, workspace, mode, profile)
    private_tmp = PRIVATE_TMP.search(stderr)
    if private_tmp and str(workspace) not in private_tmp.group(0):
        notes.append("the sandbox gives each command its own empty /tmp and /var/tmp: files of the host's /tmp "
                     "are not visible there; use the workspace for files that must last")
    if not network and NO_NETWORK.search(stderr):
        notes.append("the sandbox gave this command no network: only commands the user approves, whose policy "
                     "check says they use the network, get it. Ask the user if the network is needed.")
    return notes


def _read_only(stderr: str, workspace: Path, mode: str, profile: str) -> list[str]:
    if profile == "read-only":
        return ["the sandbox profile is read-only: no command may write (the user can switch with /sandbox)"]
    if mode == "read-only":
        return ["this command ran with the workspace read-only because it was classified Safe (read-only); "
                "a command that writes is asked about first"]
    return [f"the sandbox keeps everything outside the workspace ({workspace}) and a private /tmp read-only; "
            "write inside the workspace instead"]


def _protected_hit(stderr: str, workspace: Path, control: dict[str, str]) -> tuple[str, str] | None:
    ws = str(workspace).rstrip("/") + "/"
    for line in stderr.splitlines():
        if not WRITE_FAILED.search(line):
            continue
        for match in PATHISH.finditer(line):
            word = match.group(1)
            rel = word[len(ws):] if word.startswith(ws) else word.removeprefix("./")
            for ctl, why in control.items():
                if rel == ctl or rel.startswith(ctl + "/") or f"/{ctl}" in rel or rel.endswith("/" + ctl):
                    return ctl, why
    return None
