"""A command's output costs bounded disk; its processes end with its call, or with LACA."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from framework_core.config.models import TepsSettings
from framework_core.errors import ToolArgumentError, ToolError
from framework_core.tools import runner
from framework_core.tools.base import ToolContext
from framework_core.tools.builtin import bash_handler, bash_preview
from framework_core.tools.interactive import needs_terminal
from framework_core.tools.runner import run_command
from framework_core.tools.spill import OutputLimits, SessionBudget, remove_stale
from tests.waiting import alive, wait_until

ROOT = Path(__file__).resolve().parents[3]
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"}


def run(cmd: str, cwd: Path, limits: OutputLimits, **kw):
    opts = {"env": ENV, "timeout_s": 20, "budget_chars": 4000, "limits": limits}
    opts.update(kw)
    return run_command(cmd, cwd=cwd, **opts)


def gone(pid: int) -> bool:
    return not alive(pid)  # a zombie is gone for our purpose


@pytest.mark.parametrize("producer", ["cat /dev/zero", "yes"])
def test_endless_producer_is_stopped_by_the_cap_not_the_disk(tmp_path: Path, producer: str) -> None:
    limits = OutputLimits(tmp_path / "out", max_bytes=5_000_000)
    out = run(producer, tmp_path, limits)
    assert out.stopped and "stopped after 5 MB of output" in out.stopped and "output_max_bytes" in out.stopped
    assert out.exit_code is None and 5_000_000 < out.total_bytes < 5_000_000 + 4 * runner.CHUNK
    saved = sum(f.stat().st_size for f in (tmp_path / "out").iterdir())
    assert saved <= out.total_bytes


def test_session_budget_bounds_saved_output_across_commands(tmp_path: Path) -> None:
    limits = OutputLimits(tmp_path / "out", max_bytes=50_000_000, budget=SessionBudget(3_000_000))
    first = run("head -c 2000000 /dev/zero | tr '\\0' a", tmp_path, limits)
    assert first.full_output_path and "of line 1 of 1 left out" in first.stdout  # one 2 MB line
    second = run("head -c 2000000 /dev/zero | tr '\\0' b", tmp_path, limits)
    assert second.exit_code == 0
    assert "partly saved" in second.stdout and "output_session_max_bytes" in second.stdout
    saved = sum(f.stat().st_size for f in (tmp_path / "out").iterdir())
    assert saved <= 3_000_000


def test_no_spill_folder_keeps_head_and_tail_and_says_so(tmp_path: Path) -> None:
    out = run("seq 1 300000", tmp_path, OutputLimits(None))
    assert out.exit_code == 0 and out.full_output_path is None
    assert "not saved" in out.stdout and out.stdout.rstrip().endswith("300000")


def test_background_children_end_with_their_call(tmp_path: Path) -> None:
    out = run("sleep 300 >/dev/null 2>&1 & echo $!", tmp_path, OutputLimits(tmp_path / "o"))
    pid = int(out.stdout.strip())
    assert out.exit_code == 0
    assert wait_until(lambda: gone(pid), 5), "the background sleep outlived its call"


def test_a_command_that_closes_its_pipes_still_runs_to_its_end(tmp_path: Path) -> None:
    out = run("exec >/dev/null 2>&1; sleep 0.7; touch done", tmp_path, OutputLimits(tmp_path / "o"))
    assert out.exit_code == 0 and (tmp_path / "done").exists()


def test_program_waiting_for_a_terminal_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "TTY_GRACE_S", 0.5)
    start = time.monotonic()
    out = run("echo 'Vim: Warning: Output is not to a terminal' >&2; sleep 30", tmp_path,
              OutputLimits(tmp_path / "o"))
    assert time.monotonic() - start < 10
    assert out.stopped and "interactive terminal" in out.stopped


def test_vim_that_finishes_on_its_own_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "TTY_GRACE_S", 2.0)
    out = run("echo 'Vim: Warning: Output is not to a terminal' >&2; sleep 0.3; echo saved", tmp_path,
              OutputLimits(tmp_path / "o"))
    assert out.exit_code == 0 and out.stopped is None and "saved" in out.stdout


@pytest.mark.parametrize("cmd", ["vim f.txt", "cd src && nano x", "EDITOR=x vi", "sudo -u me vim a", "git commit",
                                 "git commit -a", "git rebase -i HEAD~3", "top", "htop", "crontab -e",
                                 "git tag -a v1", "ls | less; emacs f"])
def test_interactive_commands_are_recognised(cmd: str) -> None:
    assert needs_terminal(cmd)


@pytest.mark.parametrize("cmd", ["vim -es -c 'wq' f", "git commit -m 'x'", "git commit -am x", "git commit --no-edit",
                                 "top -b -n 1", "emacs --batch -l x.el", "ls vim", "echo vim", "grep -r nano .",
                                 "git log", "less README.md", "tmux ls", "cat 'unbalanced"])
def test_batch_forms_are_not_refused(cmd: str) -> None:
    assert needs_terminal(cmd) is None


def ctx(tmp_path: Path, **settings) -> ToolContext:
    return ToolContext(workspace=tmp_path, settings=TepsSettings(**settings), env=ENV)


def test_interactive_command_is_refused_before_it_runs(tmp_path: Path) -> None:
    with pytest.raises(ToolArgumentError, match="interactive editor"):
        bash_preview({"command": "vim notes.txt"}, ctx(tmp_path))


def test_timed_out_command_is_an_error_with_its_output(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        bash_handler({"command": "echo started; sleep 30"}, ctx(tmp_path, command_timeout_s=1))
    assert "timed out after 1 s" in str(err.value) and err.value.data["stdout"] == "started\n"


def test_reaper_kills_the_running_group_when_laca_is_killed(tmp_path: Path) -> None:
    """A LACA killed with SIGKILL mid-command leaves no process of that command behind."""
    pidfile = tmp_path / "pid"
    code = textwrap.dedent(f"""
        from pathlib import Path
        from framework_core.tools.runner import run_command
        from framework_core.tools.spill import OutputLimits
        run_command("echo $$ > {pidfile}; sleep 300; true", cwd=Path({str(tmp_path)!r}), env={ENV!r},
                    timeout_s=600, budget_chars=4000, limits=OutputLimits(None))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        assert wait_until(lambda: pidfile.exists() and pidfile.read_text().strip().isdigit(), 20)
        shell = int(pidfile.read_text())
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)
        assert wait_until(lambda: gone(shell), 5), "the command outlived the LACA that ran it"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_command_whose_laca_died_before_tracking_it_never_runs(tmp_path: Path) -> None:
    """The gate in front of every command: LACA's word comes only once the reaper lists the command's group,
    so a LACA killed before that (its end of the pipe closed, no word) leaves nothing running untracked."""
    marker = tmp_path / "ran"
    word_r, word_w = os.pipe()
    gate = subprocess.Popen([*runner.GATE, "bash", "-c", f"touch {marker}"], stdin=word_r, env=ENV)
    os.close(word_r)
    os.close(word_w)  # what the kernel does when LACA dies
    assert gate.wait(10) == 125 and not marker.exists()
    said = run_command(f"touch {marker}; echo ran", cwd=tmp_path, env=ENV, timeout_s=30, budget_chars=4000)
    assert said.exit_code == 0 and said.stdout == "ran\n" and marker.exists()


def test_stale_output_folders_are_removed_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = data / "sessions" / "20200101-000000-abcd.output"
    fresh = data / "sessions" / "20990101-000000-abcd.output"
    for folder in (old, fresh):
        folder.mkdir(parents=True)
        (folder / "laca-stdout-x.log").write_text("x")
    os.utime(old, (time.time() - 3 * 86400,) * 2)
    assert remove_stale(data) == 1
    assert not old.exists() and fresh.exists()


UNSHARE = shutil.which("unshare")


def _private_tmpfs_works() -> bool:
    if not UNSHARE:
        return False
    probe = subprocess.run([UNSHARE, "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null "
                            "|| mount -t tmpfs -o size=64k tmpfs /tmp"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _private_tmpfs_works(), reason="no private mount namespace for a small tmpfs here")
def test_full_disk_stops_the_command_and_frees_the_space(tmp_path: Path) -> None:
    """A real ENOSPC: the output folder is a 2 MB tmpfs mounted in a private mount namespace (the host's
    mounts are not touched). The command is stopped, the error says why, and the partial file is removed."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    code = textwrap.dedent(f"""
        import json, os, subprocess
        from pathlib import Path
        from framework_core.tools.runner import run_command
        from framework_core.tools.spill import OutputLimits
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", {str(mnt)!r}], check=True)
        out = run_command("yes", cwd=Path("/"), env={ENV!r}, timeout_s=60, budget_chars=4000,
                          limits=OutputLimits(Path({str(mnt)!r}) / "out", max_bytes=10**9))
        left = sum(f.stat().st_size for f in (Path({str(mnt)!r}) / "out").iterdir())
        print(json.dumps({{"stopped": out.stopped, "code": out.exit_code, "left": left,
                          "note": "not saved" in out.stdout}}))
    """)
    run_ = subprocess.run([UNSHARE, "--user", "--map-root-user", "--mount", sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert run_.returncode == 0, run_.stderr[-2000:]
    import json

    result = json.loads(run_.stdout.strip().splitlines()[-1])
    assert result["stopped"] and "No space left on device" in result["stopped"]
    assert result["code"] is None and result["left"] == 0
    assert result["note"]
