"""The folder bound as a command's home serves the next command only when it is exactly as new.

Making and removing the mount points of the home costs more than a short command, so a home a command left
untouched is kept for the next one; anything a command did to it (a file, a mode, an extended attribute) and the
next command gets a new one. Real sandboxed processes, with the home and workspace outside /tmp.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.sandbox.probe import probe
from tests.unit.sandbox.overlay_kit import system_python
from framework_core.sandbox.sandbox import Sandbox
from framework_core.tools.runner import run_command

pytestmark = pytest.mark.skipif(not probe().available,
                                reason="no sandbox on this machine: " + "; ".join(probe().missing()))

PYTHON = system_python()


@pytest.fixture
def sandbox(outside_tmp: Path) -> Iterator[Sandbox]:
    home, ws = outside_tmp / "home", outside_tmp / "ws"
    (home / ".config").mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n")
    ws.mkdir()
    box = Sandbox("workspace-write", ws, home=home, cache_root=outside_tmp / "cache")
    yield box
    box.close()


def run(box: Sandbox, command: str, *, writes: bool = False) -> tuple[str, str, list[str]]:
    """The command's output, the folder that served as its home, and the notes said with it."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(box.home)}
    with box.launch(cwd=box.workspace, writes=writes, network=False) as launch:
        out = run_command(command, cwd=box.workspace, env=env, timeout_s=30, budget_chars=10_000,
                          wrapper=launch.argv, pass_fds=launch.pass_fds)
    box.discard(launch)
    source = launch.argv[launch.argv.index(str(box.home.resolve())) - 1]
    return out.stdout + out.stderr, source, launch.notes


def test_an_untouched_home_serves_the_next_command_in_either_mode(sandbox: Sandbox) -> None:
    _, first, notes = run(sandbox, "true")
    assert notes == []
    _, second, _ = run(sandbox, "true", writes=True)
    _, third, _ = run(sandbox, "cat ~/.gitconfig")
    assert first == second == third
    assert os.path.isdir(first)


def test_a_file_written_to_the_home_is_gone_for_the_next_command(sandbox: Sandbox) -> None:
    _, first, notes = run(sandbox, "echo x > ~/.somerc")
    assert any("not kept" in n and "~/.somerc" in n for n in notes), notes
    out, second, _ = run(sandbox, "ls -A ~; test -e ~/.somerc && echo STILL-THERE")
    assert "STILL-THERE" not in out and ".somerc" not in out
    assert second != first and not os.path.exists(first)


def test_a_mode_changed_in_the_home_is_not_seen_by_the_next_command(sandbox: Sandbox) -> None:
    run(sandbox, "true")  # the home's folders exist now
    out, _, _ = run(sandbox, "chmod 777 ~/.cargo ~ && stat -c %a ~/.cargo")
    assert out.strip() == "777", out
    out, _, _ = run(sandbox, "stat -c %a ~/.cargo ~")
    assert out.split() == ["700", "700"], out


def test_an_extended_attribute_set_in_the_home_is_not_seen_by_the_next_command(sandbox: Sandbox) -> None:
    set_it = f"{PYTHON} -c \"import os; os.setxattr(os.path.expanduser('~/.cargo'), 'user.mark', b'1')\""
    out, _, _ = run(sandbox, f"{set_it} && echo SET")
    if "SET" not in out:
        pytest.skip(f"no user extended attributes on this file system: {out.strip()[:200]}")
    out, _, _ = run(sandbox, f"{PYTHON} -c \"import os; print(os.listxattr(os.path.expanduser('~/.cargo')))\"")
    assert out.strip() == "[]", out


def test_an_overlay_nothing_changed_in_serves_the_next_command(sandbox: Sandbox) -> None:
    if not sandbox.overlay:
        pytest.skip("no overlay on this machine")
    uppers = []
    for _ in range(3):
        with sandbox.launch(cwd=sandbox.workspace, writes=True, network=False) as launch:
            run_command("true", cwd=sandbox.workspace, env={"PATH": "/usr/bin:/bin"}, timeout_s=30,
                        budget_chars=1000, wrapper=launch.argv, pass_fds=launch.pass_fds)
        sandbox.discard(launch)
        uppers.append(launch.upper)
    assert uppers[0] == uppers[1] == uppers[2] and uppers[0] is not None and uppers[0].is_dir()


def test_what_a_declined_overlay_held_is_never_seen_by_the_next_command(sandbox: Sandbox) -> None:
    if not sandbox.overlay:
        pytest.skip("no overlay on this machine")
    (sandbox.workspace / "kept.txt").write_text("kept\n")
    set_root_xattr = f"{PYTHON} -c \"import os; os.setxattr('.', 'user.mark', b'1')\""
    for change in ("echo made > new.txt", "rm kept.txt", "mkdir d && rmdir d && echo x > e && rm e",
                   "chmod 700 .", set_root_xattr):
        with sandbox.launch(cwd=sandbox.workspace, writes=True, network=False) as launch:
            run_command(change, cwd=sandbox.workspace, env={"PATH": "/usr/bin:/bin"}, timeout_s=30,
                        budget_chars=1000, wrapper=launch.argv, pass_fds=launch.pass_fds)
        sandbox.discard(launch)  # declined: nothing applied
        look = (f"ls -A; stat -c %a .; {PYTHON} -c \"import os; print(os.listxattr('.'))\"")
        out, _, _ = run(sandbox, look, writes=True)
        assert out.split() == ["kept.txt", out.split()[1], "[]"] and "new.txt" not in out, (change, out)
        fresh = Sandbox("workspace-write", sandbox.workspace, home=sandbox.home, cache_root=sandbox.cache_root)
        try:
            expected, _, _ = run(fresh, look, writes=True)
        finally:
            fresh.close()
        assert out == expected, (change, out, expected)


def test_a_command_run_as_a_transaction_leaves_its_overlay_for_the_next_one(outside_tmp: Path) -> None:
    from framework_core.sandbox.transaction import SandboxTransaction

    ws, overlays = outside_tmp / "ws", outside_tmp / "overlays"
    ws.mkdir()
    overlays.mkdir()
    box = Sandbox("workspace-write", ws, home=outside_tmp, cache_root=outside_tmp / "cache", overlay_dirs=(overlays,))
    if not box.overlay:
        pytest.skip("no overlay on this machine")

    def command(text: str) -> tuple[str, list[str]]:
        """The command's output, and the overlay folders there are once it is done."""
        def runner(argv: list[str], fds: tuple[int, ...]) -> str:
            return run_command(text, cwd=ws, env={"PATH": "/usr/bin:/bin"}, timeout_s=30, budget_chars=1000,
                               wrapper=argv, pass_fds=fds).stdout
        out = SandboxTransaction(box, ws, writes=True).run(runner).result
        return out, sorted(p.name for p in overlays.glob("*/cmd-*"))

    try:
        _, after_first = command("true")
        _, after_second = command("echo made > landed.txt")
        assert (ws / "landed.txt").read_text() == "made\n"  # what the second one made landed
        out, after_third = command("cat landed.txt; ls -A")
        assert out == "made\nlanded.txt\n"  # seen once, from the workspace (the upper it was in is made anew)
        assert after_first == after_second == after_third and len(after_first) == 1  # one folder served all three
    finally:
        box.close()
