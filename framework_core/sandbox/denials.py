"""Say plainly when a command failed because the sandbox stopped it, so the model and the user know why.

Pure: reads a command's stderr and what its sandbox allowed. The notes go into the tool result and on screen.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from framework_core.sandbox.home import instead

if TYPE_CHECKING:
    from framework_core.sandbox.home import HomeView

NO_NETWORK = re.compile(r"Could not resolve host|Temporary failure in name resolution|Name or service not known|"
                        r"Network is unreachable|getaddrinfo|No address associated with hostname|"
                        r"Failed to establish a new connection|Connection refused|nodename nor servname|"
                        # the tools' own offline modes, which the sandbox sets without the network (environment.py)
                        r"ENOTCACHED|module lookup disabled by GOPROXY=off|but --offline was specified|"
                        r"Network connectivity is disabled", re.I)
WRITE_FAILED = re.compile(r"Read-only file system|Device or resource busy|Permission denied|"
                          r"Operation not permitted|could not (?:write|lock|open)", re.I)
PRIVATE_TMP = re.compile(r"(?:/var)?/tmp/\S*.*No such file or directory")
MISSING = re.compile(r"No such file or directory|cannot access|not found|ENOENT", re.I)
READ_ONLY = re.compile(r"Read-only file system|EROFS|Device or resource busy|EBUSY", re.I)
NO_SOCKET = re.compile(r"could not connect|cannot connect to|couldn't connect|failed to connect|"
                       r"\.sock\b.*(?:refused|No such file)|(?:refused|No such file).*\.sock\b", re.I)
MISSING_PATH = re.compile(r"(/[^\s:'\"`]+)['\"`]?: No such file or directory")
WORKTREE_OUTSIDE = re.compile(r"could not create leading directories of '([^']+?)/\.git'.*Read-only file system")
PATHISH = re.compile(r"(?:^|[\s'\"`(])((?:/|\./|\.\./)?[\w.@+-]+(?:/[\w.@+-]+)*)")


def explain(stderr: str, *, workspace: Path, mode: str | None, network: bool,
            control: dict[str, str], profile: str, home: "HomeView | None" = None,
            workspace_is_home: bool = False, exists: Callable[[str], bool] = os.path.lexists) -> list[str]:
    """Notes for a failed sandboxed command; `control` maps each control path (relative) to its reason; `home`
    is what the command saw of the home (`exists` tells which missing paths are there outside)."""
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
    elif home is not None and (home_notes := _home(stderr, home, exists)):
        notes += home_notes
    elif mode != "read-only" and (worktree := WORKTREE_OUTSIDE.search(stderr)):
        notes.append(f"a git worktree at {worktree.group(1)} is outside the workspace ({workspace}), which "
                     "commands cannot change: it does not exist and cannot land; make it inside the workspace "
                     "instead (for example `git worktree add worktrees/NAME`)")
    elif "Read-only file system" in stderr:
        notes += _read_only(stderr, workspace, mode, profile, workspace_is_home)
    elif outside := _outside_view(stderr, workspace, exists):
        notes.append(f"{outside} is outside what the sandbox shows: a command sees only the workspace, the "
                     "system's programs and libraries (and of /etc what tools need), and the home's allowlist; "
                     "everything else does not exist inside, and nothing outside the workspace can be written "
                     "(the rest is read-only). The user can approve running the command outside the sandbox.")
    private_tmp = PRIVATE_TMP.search(stderr)
    if private_tmp and str(workspace) not in private_tmp.group(0):
        notes.append("the sandbox gives each command its own empty /tmp and /var/tmp: files of the host's /tmp "
                     "are not visible there; use the workspace for files that must last")
    if NO_SOCKET.search(stderr):
        notes.append("sockets of the host (in /run, /tmp and the home: docker, databases, ssh and gpg agents) are "
                     "not reachable from the sandbox; a command that needs a local service can only run outside "
                     "it, which the user approves for one call at a time")
    if not network and NO_NETWORK.search(stderr):
        notes.append("the sandbox gave this command no network (and no proxy variables): only commands the user "
                     "approves, whose policy check says they use the network, get it. Ask the user if the network "
                     "is needed.")
    return notes


def _home(stderr: str, home: "HomeView", exists: Callable[[str], bool]) -> list[str]:
    """A path of the home the command missed (there outside, not shown inside) or could not write (shown
    read-only): named, with how to allow it."""
    root = home.home.rstrip("/") + "/"
    hidden: list[str] = []
    read_only: list[str] = []
    shown_ro = home.shown("ro") + home.shown("file")
    for line in stderr.splitlines():
        # a sanitised copy is a read-only file: writing it says "Permission denied" before "Read-only file system"
        missing, ro = bool(MISSING.search(line)), bool(READ_ONLY.search(line) or "Permission denied" in line)
        if not (missing or ro):
            continue
        for match in re.finditer(r"(?:~/|" + re.escape(root) + r")[^\s'\"`:,)]*", line):
            rel = match.group(0).removeprefix("~/").removeprefix(root).rstrip("/.")
            if not rel:
                continue
            if ro and any(rel == s or rel.startswith(s + "/") for s in shown_ro):
                read_only.append(rel)
            elif missing and exists(root + rel):
                hidden.append(rel)
    notes = []
    if hidden:
        outer = [r for r in dict.fromkeys(hidden) if not any(r.startswith(o + "/") for o in hidden)]
        names = ", ".join("~/" + r for r in outer)
        notes.append(f"not shown inside the sandbox: {names}. Commands see only part of the home (toolchains, "
                     "tool configuration without credentials, LACA's own caches; `laca doctor` lists them). If a "
                     "command needs it, the user can add it to sandbox.home_allow (shown read-only) in their "
                     "LACA config, or approve running the command outside the sandbox.")
    if read_only:
        names = ", ".join("~/" + r for r in dict.fromkeys(read_only))
        notes.append(f"shown read-only inside the sandbox: {names} (a toolchain, or a copy of configuration "
                     "without credentials); the user can change it outside LACA. Caches such as ~/.cache and "
                     "~/.npm are writable (sandbox.home_caches adds one)."
                     + "".join(f" Instead: {h}." for h in instead(dict.fromkeys(read_only))))
    return notes



def _read_only(stderr: str, workspace: Path, mode: str, profile: str, workspace_is_home: bool) -> list[str]:
    if profile == "read-only":
        return ["the sandbox profile is read-only: no command may write (the user can switch with /sandbox)"]
    if mode == "read-only" and workspace_is_home:
        return [f"the workspace ({workspace}) is the user's home folder or holds it, so every command sees it "
                "read-only (nothing lands in the user's dotfiles). Only a command the user approves to run outside "
                "the sandbox can write there; or the user starts LACA in a project folder."]
    if mode == "read-only":
        return ["this command ran with the workspace read-only because it was classified Safe (read-only); "
                "a command that writes is asked about first"]
    return [f"the sandbox keeps everything outside the workspace ({workspace}) and a private /tmp read-only; "
            "write inside the workspace instead"]


def _outside_view(stderr: str, workspace: Path, exists: Callable[[str], bool]) -> str | None:
    """A path the command did not find that is there outside, not in the workspace nor the private /tmp."""
    ws = str(workspace).rstrip("/") + "/"
    for match in MISSING_PATH.finditer(stderr):
        path = match.group(1)
        if not (path + "/").startswith(ws) and not PRIVATE_TMP.match(path + ": No such file or directory") \
                and exists(os.path.dirname(path)):
            return path
    return None


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
