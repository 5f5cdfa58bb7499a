"""The view as one checked value (`sandbox/view.py`): over a grid of layouts (LACA's install under /tmp,
/var/tmp, /opt or inside the home; the home inside the install; the workspace inside the home or the install;
$HOME not the passwd home; root; a workspace on another file system), the built mounts show none of the
protected paths, and a plan that would show one is refused with the path named."""

from __future__ import annotations

import itertools

import pytest

from framework_core.sandbox.view import Hide, ViewInputs, ViewRefused, build, check, final, visible

INSTALLS = ("/tmp/laca", "/var/tmp/laca", "/opt/laca", "/home/u/src/laca", "/work/laca")
HOMES = ("/home/u", "/root", "/var/tmp/laca/.pytest-homes/h", "/work/ci-home")
PASSWD = ("same", "/root", "/home/other")
WORKSPACES = ("/home/u/proj", "/work/ws", "/var/tmp/laca/.pytest-homes/ws", "/mnt/otherfs/ws", "/opt/ws",
              "/root/proj")
MODES = ("read-only", "overlay", "write")


def layout(install: str, home: str, passwd: str, ws: str, mode: str) -> tuple[ViewInputs, tuple[str, ...]]:
    """The inputs `Sandbox` gives the view for one layout, and the paths it guards (see `Sandbox._guarded`)."""
    passwd_home = home if passwd == "same" else passwd
    laca = [f"{home}/.config/laca", f"{home}/.local/share/laca", f"{home}/.local/state/laca", f"{home}/.cache/laca",
            f"{home}/.cache/laca/sandbox-home", install, *([passwd_home] if passwd_home != home else [])]
    hidden = tuple(Hide(p, True) for p in laca if p != ws) + (Hide(f"{install}/.env", False),)
    replaced = ws != home
    inputs = ViewInputs(
        ws, mode, "/state/up" if mode == "overlay" else "", "/state/work" if mode == "overlay" else "",
        home=home if replaced else "", home_source="/tmp/rt/home-1" if replaced else "",
        home_mounts=((f"{home}/.pyenv", f"{home}/.pyenv", False),
                     (f"{home}/.cache/laca/sandbox-home/npm", f"{home}/.npm", True)) if replaced else (),
        hidden=hidden, protected=(f"{ws}/.git",), masks=(("/dev/null", f"{ws}/.env"),))
    guarded = ((home,) if replaced else ()) + tuple(h.path for h in hidden) + (f"{ws}/.env",)
    return inputs, guarded


GRID = list(itertools.product(INSTALLS, HOMES, PASSWD, WORKSPACES, MODES))


@pytest.mark.parametrize("install,home,passwd,ws,mode", GRID)
def test_no_layout_shows_a_protected_path(install: str, home: str, passwd: str, ws: str, mode: str) -> None:
    inputs, guarded = layout(install, home, passwd, ws, mode)
    mounts = build(inputs)
    check(mounts, guarded)  # raises ViewRefused naming the path
    for secret in (f"{install}/.env", "/etc/shadow", "/etc/apt/auth.conf", "/etc/containers/auth.json",
                   f"{home}/.ssh/id_rsa", "/home/other/.npmrc", f"{home}/.config/laca/config.yaml"):
        if secret.startswith(ws + "/") and secret != f"{install}/.env":
            continue  # the workspace's own files are the user's work (credential files there are masked)
        assert not visible(mounts, secret), (secret, visible(mounts, secret))
    # ordinary work is still there: the workspace as itself, the programs, the caches writable
    top = final(mounts, ws + "/README")
    assert top is not None and top.shows(ws + "/README") == ws + "/README"
    assert final(mounts, "/usr/bin/git") is not None and visible(mounts, "/etc/passwd")
    if ws != home:
        npm = final(mounts, f"{home}/.npm")
        assert npm is not None and npm.op == "bind"


def test_a_folder_is_mounted_before_anything_inside_it() -> None:
    for install, home, passwd, ws, mode in GRID[::7]:
        mounts = build(layout(install, home, passwd, ws, mode)[0])
        for i, m in enumerate(mounts):
            for later in mounts[i + 1:]:
                assert not (m.dest.startswith(later.dest.rstrip("/") + "/")), (m, later)


def test_an_allowlist_entry_that_uncovers_laca_config_is_refused_naming_it() -> None:
    inputs = ViewInputs("/work/ws", home="/home/u", home_mounts=(("/home/u/.config", "/home/u/.config", False),))
    with pytest.raises(ViewRefused) as err:
        check(build(inputs), ("/home/u", "/home/u/.config/laca"))
    assert "/home/u/.config/laca" in str(err.value) and "home" in str(err.value)


def test_a_server_root_holding_the_install_is_refused() -> None:
    inputs = ViewInputs("/work/ws", writable=("/var/tmp",))
    with pytest.raises(ViewRefused, match="/var/tmp/laca"):
        check(build(inputs), ("/var/tmp/laca",))


def test_a_workspace_holding_the_home_gets_the_empty_home_on_top() -> None:
    mounts = build(ViewInputs("/work", "overlay", "/s/u", "/s/w", home="/work/h", home_source="/rt/h"))
    assert [m.dest for m in mounts].index("/work") < [m.dest for m in mounts].index("/work/h")
    check(mounts, ("/work/h",))
    assert not visible(mounts, "/work/h/.ssh")


def test_a_hidden_folder_with_a_mount_inside_stays_read_only_and_empty() -> None:
    mounts = build(ViewInputs("/opt/laca/.pytest-homes/ws", hidden=(Hide("/opt/laca", True),)))
    hide = final(mounts, "/opt/laca/x")
    assert hide is not None and hide.op == "tmpfs" and hide.read_only
    assert final(mounts, "/opt/laca/.pytest-homes/ws/f") is not None
    check(mounts, ("/opt/laca",))
