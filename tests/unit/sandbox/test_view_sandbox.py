"""The view seen from inside a real sandbox: the passwd home (when $HOME is another folder), LACA's checkout and
/etc's secrets do not exist, while the workspace, the system's programs and the name service work. HOME and the
workspace are real folders outside /tmp (the `outside_tmp` fixture)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from framework_core.sandbox.home import HomeAllow
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.sandbox.view_inputs import install_root, passwd_home

pytestmark = pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")


def run(sandbox: Sandbox, ws: Path, script: str, writes: bool = False) -> subprocess.CompletedProcess[str]:
    with sandbox.launch(cwd=ws, writes=writes, network=False) as launch:
        done = subprocess.run([*launch.argv, "bash", "-c", script], pass_fds=launch.pass_fds, capture_output=True,
                              text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(sandbox.home)})
    if launch.upper is not None:
        sandbox.discard(launch)
    return done


def test_what_is_not_in_the_plan_does_not_exist(outside_tmp: Path) -> None:
    home, ws = outside_tmp / "home", outside_tmp / "ws"
    home.mkdir()
    ws.mkdir()
    (ws / "README.md").write_text("hello from the workspace\n")
    sandbox = Sandbox("workspace-write", ws, home=home, home_allow=HomeAllow(), cache_root=outside_tmp / "cache")
    other = passwd_home()
    probes = ["/etc/shadow", "/etc/gshadow", "/etc/ssl/private", str(install_root() / "pyproject.toml"),
              *([other] if other and other != str(home) else [])]
    try:
        done = run(sandbox, ws, "cat README.md; getent passwd root >/dev/null && echo names-ok; "
                   + "; ".join(f"test -e '{p}' && echo 'SEEN {p}'" for p in probes) + "; true")
        assert "hello from the workspace" in done.stdout and "names-ok" in done.stdout, done.stderr
        assert "SEEN" not in done.stdout, done.stdout
        wrote = run(sandbox, ws, "echo made > made.txt && cat made.txt", writes=True)
        assert wrote.returncode == 0 and "made" in wrote.stdout, wrote.stderr
    finally:
        sandbox.close()
