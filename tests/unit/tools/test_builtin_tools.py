"""The built-in tools' machinery: process groups, output caps with spill files, atomic writes, undo."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from framework_core.tools.envscrub import scrub_env
from framework_core.sandbox.undo_store import UndoStore
from framework_core.tools.files import resolve_in_workspace, unified_diff_preview, write_with_undo
from framework_core.tools.runner import run_command
from tests.waiting import alive, wait_until

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"}


def run(cmd: str, cwd: Path, **kw):
    opts = {"env": ENV, "timeout_s": 10, "budget_chars": 4000, "spill_dir": cwd / "spill"}
    opts.update(kw)
    return run_command(cmd, cwd=cwd, **opts)


def test_the_environment_is_an_allowlist_whatever_a_secret_is_called() -> None:
    env = {"PATH": "/bin", "OPENAI_API_KEY": "x", "github_token": "y", "MY_SERVICE_PASS": "z", "EDITOR": "vi",
           "LC_ALL": "C", "VIRTUAL_ENV": "/v", "SSL_CERT_FILE": "/c", "MYTOOL_MODE": "fast", "MYTOOL_DEBUG": "1"}
    clean, withheld = scrub_env(env)
    assert clean == {"PATH": "/bin", "EDITOR": "vi", "LC_ALL": "C", "VIRTUAL_ENV": "/v", "SSL_CERT_FILE": "/c"}
    assert withheld == ("MYTOOL_DEBUG", "MYTOOL_MODE", "MY_SERVICE_PASS", "OPENAI_API_KEY", "github_token")
    clean, withheld = scrub_env(env, ["MYTOOL_*", "github_token"])  # keep_env: names and globs
    assert {"MYTOOL_MODE", "MYTOOL_DEBUG", "github_token"} <= set(clean)
    assert withheld == ("MY_SERVICE_PASS", "OPENAI_API_KEY")


def test_proxy_variables_go_only_with_the_network() -> None:
    from framework_core.sandbox.environment import command_env

    env = {"PATH": "/bin", "HTTPS_PROXY": "http://p:1", "no_proxy": "x"}
    assert command_env(env, network=True)[0] == env
    assert command_env(env, network=False)[0] == {"PATH": "/bin"}


def test_output_head_and_tail_kept_full_output_spilled(tmp_path: Path) -> None:
    out = run("seq 1 2000000", tmp_path)  # ~14 MB
    assert out.exit_code == 0 and out.total_bytes > 10_000_000
    assert len(out.stdout) < 5000
    assert out.stdout.startswith("1\n2\n3\n") and out.stdout.rstrip().endswith("2000000")
    assert "left out: lines" in out.stdout and out.full_output_path
    assert Path(out.full_output_path).stat().st_size == out.total_bytes
    expected = "".join(f"{i}\n" for i in range(1, 2_000_001)).encode()
    assert Path(out.full_output_path).read_bytes() == expected  # every byte, in order, through the reused buffer
    assert " of 2,000,000. Read them with readFile" in out.stdout


def test_small_output_untouched_and_streamed(tmp_path: Path) -> None:
    chunks: list[str] = []
    out = run("echo one; echo two >&2; exit 3", tmp_path, on_output=chunks.append)
    assert out.stdout == "one\n" and out.stderr == "two\n" and out.exit_code == 3
    assert "one" in "".join(chunks) and out.full_output_path is None


def test_timeout_kills_whole_process_group(tmp_path: Path) -> None:
    started = time.monotonic()
    out = run("sleep 30 & echo $! > bg.pid; sleep 30", tmp_path, timeout_s=1)
    assert out.timed_out and out.exit_code is None and time.monotonic() - started < 5
    pid = int((tmp_path / "bg.pid").read_text())
    assert wait_until(lambda: not alive(pid), 5), "the background sleep outlived the timeout"


def test_exited_shell_does_not_wait_for_background_children(tmp_path: Path) -> None:
    out = run("sleep 20 & echo started", tmp_path)
    assert out.stdout == "started\n" and out.duration_s < 5


def test_resolve_in_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    assert resolve_in_workspace("sub/../a.txt", ws) == (ws / "a.txt", True)
    assert resolve_in_workspace("../x", ws)[1] is False
    assert resolve_in_workspace("/etc/passwd", ws)[1] is False
    os.symlink("/etc", ws / "escape")
    assert resolve_in_workspace("escape/passwd", ws)[1] is False


def test_atomic_write_keeps_mode_and_undo_restores(tmp_path: Path) -> None:
    f = tmp_path / "script.sh"
    f.write_text("old\n")
    f.chmod(0o750)
    store = UndoStore(tmp_path / "undo", 10_000_000)
    write_with_undo(f, b"new\n", append=False, undo=store, label="writeFile script.sh")
    assert f.read_text() == "new\n" and stat.S_IMODE(f.stat().st_mode) == 0o750
    created = tmp_path / "new" / "file.txt"
    write_with_undo(created, b"x", append=False, undo=store, label="writeFile new/file.txt")
    write_with_undo(f, b"more\n", append=True, undo=store, label="writeFile script.sh")
    assert f.read_text() == "new\nmore\n"
    result = store.revert(3)
    assert not created.exists() and not (tmp_path / "new").exists() and f.read_text() == "old\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o750 and len(result.reverted) == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".laca-tmp")] == []


def test_a_failed_write_leaves_no_undo_entry(tmp_path: Path) -> None:
    store = UndoStore(tmp_path / "undo", 10_000_000)
    target = tmp_path / "dir-not-file"
    target.mkdir()
    with pytest.raises(OSError):
        write_with_undo(target, b"x", append=False, undo=store, label="writeFile dir-not-file")
    assert store.entries() == []


def test_diff_preview_never_cuts_silently() -> None:
    old = "\n".join(str(i) for i in range(1000))
    new = "\n".join(str(i * 2) for i in range(1000))
    text = unified_diff_preview(old, new, "f.txt", max_lines=50)
    assert text.count("\n") == 50 and "more diff lines not shown" in text
    assert unified_diff_preview("a", "a", "f") == "(no changes: the new content is identical)"


def test_200_mb_of_output_keeps_memory_bounded(tmp_path: Path) -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from framework_core.tools.spill import OutputLimits, SessionBudget

    roomy = OutputLimits(tmp_path / "spill", max_bytes=300_000_000, budget=SessionBudget(300_000_000))
    out = run("yes 'a typical line of build output' | head -c 200000000", tmp_path, budget_chars=30_000,
              limits=roomy)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert out.total_bytes == 200_000_000 and out.exit_code == 0
    assert len(out.stdout) < 31_000 and "left out: lines" in out.stdout
    assert grown_mb < 50
    Path(out.full_output_path).unlink()
