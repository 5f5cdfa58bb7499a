"""New refs a change set brings, and what their commits would put in the workspace.

A command may land a branch whose commit carries `.laca/rules.yaml` or an `.envrc`: as objects and a ref it is
git's data and lands, but the user's next `git checkout` outside LACA writes those files unjudged. So for each
ref a change set adds or moves, the files its commit holds that differ from the repository's `HEAD` are judged
by name (`runs_later.py`, LACA's own files) and named in the result.

Git is run only to read objects, with none of the repository's or the user's configuration: a throwaway git
directory of LACA's own, the overlay's object folder first and the repository's as an alternate, no system or
global config, an empty home.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from framework_core.sandbox import runs_later
from framework_core.sandbox.gate import LACA_FILES

_REF = re.compile(r"^(?P<gd>(?:.*/)?\.git)/(?P<ref>refs/(?:heads|tags|remotes)/.+)$")
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
TIMEOUT_S = 10
MAX_REFS = 20


def changed_refs(rels: list[str]) -> dict[str, list[str]]:
    """{git directory: [refs]} of the loose refs among changed paths (`.git/refs/heads/x`)."""
    out: dict[str, list[str]] = {}
    for rel in rels:
        m = _REF.match(rel)
        if m:
            out.setdefault(m.group("gd"), []).append(m.group("ref"))
    return out


def ref_notes(upper: Path, workspace: Path, rels: list[str]) -> list[str]:
    """One line per new or moved ref whose commit holds files that do not land by themselves as data."""
    git = shutil.which("git")
    found = changed_refs(rels)
    if git is None or not found:
        return []
    notes: list[str] = []
    for gd, refs in found.items():
        head = _head(workspace / gd)
        for ref in refs[:MAX_REFS]:
            sha = _first_line(upper / gd / ref)
            if sha is None or not _SHA.match(sha):
                continue
            paths = _paths(git, upper / gd / "objects", workspace / gd / "objects", sha, head)
            flagged = [f"{p} ({why})" for p, why in ((p, _why(p)) for p in paths) if why]
            if flagged:
                shown = "; ".join(flagged[:6]) + (f"; and {len(flagged) - 6} more" if len(flagged) > 6 else "")
                notes.append(f"{ref} (new or moved) holds what a checkout would put in the workspace unjudged: "
                             f"{shown}. Check it out through LACA, or inspect it before you check it out yourself.")
    return notes


def _why(path: str) -> str | None:
    if path.split("/", 1)[0] in LACA_FILES:
        return "LACA's own file"
    found = runs_later.judge(path)
    return found.why if found is not None and found.implicit else None


def _paths(git: str, objects: Path, alternate: Path, sha: str, head: str | None) -> list[str]:
    """The files of commit `sha` that differ from `head` (all its files without one), read with no config."""
    with tempfile.TemporaryDirectory(prefix="laca-refs-") as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_DIR": str(Path(tmp) / "g"),
               "GIT_OBJECT_DIRECTORY": str(objects if objects.is_dir() else alternate),
               "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(alternate), "GIT_TERMINAL_PROMPT": "0"}
        try:
            plain = {k: env[k] for k in ("PATH", "HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL")}
            subprocess.run([git, "init", "-q", "--bare", env["GIT_DIR"]], env=plain, capture_output=True,
                           timeout=TIMEOUT_S, check=True)
            args = ["diff-tree", "-r", "--name-only", "--no-commit-id", head, sha] if head else \
                ["ls-tree", "-r", "--name-only", sha]
            done = subprocess.run([git, *args], env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        except (OSError, subprocess.SubprocessError):
            return []
    return done.stdout.splitlines() if done.returncode == 0 else []


def _head(gitdir: Path) -> str | None:
    """The commit `HEAD` names in the workspace as it is (a symbolic ref read loose or from packed-refs)."""
    line = _first_line(gitdir / "HEAD") or ""
    if _SHA.match(line):
        return line
    if not line.startswith("ref: "):
        return None
    ref = line[5:].strip()
    loose = _first_line(gitdir / ref)
    if loose and _SHA.match(loose):
        return loose
    try:
        for row in (gitdir / "packed-refs").read_text(encoding="utf-8").splitlines():
            parts = row.split(" ", 1)
            if len(parts) == 2 and parts[1] == ref and _SHA.match(parts[0]):
                return parts[0]
    except (OSError, UnicodeDecodeError):
        pass
    return None


def _first_line(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(256).decode("ascii", "replace").split("\n", 1)[0].strip()
    except OSError:
        return None
