"""Where a command's overlay keeps its upper and work directories: on the workspace's file system where
possible, so that what the command made lands by rename instead of by copy (see `land.py`).

The first candidate that passes every check is used for the session: LACA's own state folder
(`$XDG_STATE_HOME/laca/overlays`, by default `~/.local/state/laca/overlays`) when it is on the workspace's
device, is not inside the workspace (overlayfs refuses an upper layer inside its lower one) and holds an
overlay's upper layer (checked once, with a real overlay). Otherwise the caller's runtime folder in `$TMPDIR`
is used, as before: changes then land by rename where that is the workspace's device too, and by copy where
it is not. Nothing is ever put in the user's own tree. Upper and work are always made side by side, since
overlayfs needs both on one file system.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from framework_core.sandbox.nodes import remove_tree
from framework_core.sandbox.plan import SandboxPlan, bwrap_argv

STALE_S = 12 * 3600  # a session folder of a process that is gone is removed after this long
_SESSION = re.compile(r"^(\d+)-")


def default_candidates() -> tuple[Path, ...]:
    from framework_core.config.dirs import user_state_dir

    return (user_state_dir() / "overlays",)


def overlay_home(workspace: Path, bwrap: str, candidates: tuple[Path, ...]) -> Path | None:
    """A new folder for this session's overlays on the workspace's file system, or None (use $TMPDIR)."""
    try:
        device = os.stat(workspace).st_dev
    except OSError:
        return None
    real_ws = os.path.realpath(workspace)
    for base in candidates:
        if _nearest_device(base) != device or _inside(os.path.realpath(base), real_ws):
            continue
        try:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)
            _remove_stale(base)
            folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))
        except OSError:
            continue
        if os.stat(folder).st_dev == device and _holds_an_overlay(folder, bwrap):
            return folder
        drop(folder)
    return None


def drop(folder: Path) -> None:
    """Remove a scratch folder, however deep; overlayfs leaves `work/work` without permissions."""
    for work in (folder / "work" / "work", *folder.glob("*/work/work")):
        try:
            os.chmod(work, 0o700)
        except OSError:  # absent
            pass
    try:
        remove_tree(str(folder))
    except OSError:
        pass


def _nearest_device(path: Path) -> int | None:
    """The device of `path`, or of its nearest existing parent (the folder is made only when it will do)."""
    for p in (path, *path.parents):
        try:
            return os.stat(p).st_dev
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return None


def _inside(a: str, b: str) -> bool:
    """One of the two folders is the other or inside it."""
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _holds_an_overlay(folder: Path, bwrap: str) -> bool:
    """A real overlay with its upper layer here keeps a write apart (the file system supports what it needs)."""
    probe = folder / "probe"
    lower, upper, work = probe / "lower", probe / "upper", probe / "work"
    try:
        for d in (lower, upper, work):
            d.mkdir(parents=True)
        plan = SandboxPlan(str(lower), str(lower), "overlay", upper=str(upper), work=str(work))
        done = subprocess.run([*bwrap_argv(bwrap, plan), "bash", "-c", "echo x > f"], capture_output=True,
                              timeout=10, stdin=subprocess.DEVNULL)
        return done.returncode == 0 and (upper / "f").is_file() and not (lower / "f").exists()
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        drop(probe)


def _remove_stale(base: Path) -> None:
    """Session folders left by LACA processes that ended without cleaning up (killed), once they are old."""
    now = time.time()
    for entry in os.scandir(base):
        m = _SESSION.match(entry.name)
        if m is None or _alive(int(m.group(1))):
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime > STALE_S:
                drop(Path(entry.path))
        except OSError:
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
