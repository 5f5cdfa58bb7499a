"""The sandbox with real processes, through TEPS as the agent uses it, on throwaway workspaces.

Every check here only probes (`/proc/self/status`, `/proc/self/ns/*`, reads, writes under temporary folders);
nothing tries to change the host.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from framework_core.core.approval import ApprovalAnswer, ScriptedApprover
from framework_core.lial_core import ToolRequest
from framework_core.policy.decide import PolicyState
from framework_core.policy.rules import Rule, RuleSet
from framework_core.sandbox.probe import probe
from framework_core.sandbox.sandbox import Sandbox
from framework_core.teps import TEPSEngine
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(not probe().available,
                                reason="no sandbox on this machine: " + "; ".join(probe().missing()))

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-MATERIAL\n")
    (h / ".netrc").write_text("machine x login y password NETRC-SECRET\n")
    return h


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def engine(ws: Path, home: Path, answers=(), *, profile="workspace-write", env=None, rules=None,
           bwrap=None, overlay=False) -> tuple[TEPSEngine, ScriptedApprover]:
    approver = ScriptedApprover(answers)
    base = {"PATH": os.environ["PATH"], "HOME": str(home), **GIT_ENV, **(env or {})}
    sandbox = Sandbox(profile, ws.resolve(), home=home, use_overlay=overlay, bwrap=bwrap)
    # allow_dangerous: Dangerous commands ask instead of being blocked, so these tests can approve what the policy
    # already refuses and show that the sandbox holds for a mistaken "y" too
    policy = PolicyState(rules=rules or RuleSet(), allow_dangerous=True)
    teps = TEPSEngine({}, workspace=ws, approver=approver, env=base, sandbox=sandbox, policy=policy)
    return teps, approver


def run(teps: TEPSEngine, command: str) -> dict:
    result = teps.execute_tool({"request_id": "r1", "tool_name": "executeBashCommand",
                                "parameters": {"command": command}, "icerc_full_text": "test"})
    return result


def status_field(text: str, name: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(name + ":"))


def test_no_capabilities_no_new_privileges_own_namespaces(ws: Path, home: Path) -> None:
    teps, _ = engine(ws, home)
    out = run(teps, "cat /proc/self/status; ls -l /proc/self/ns/")["data"]["stdout"]
    assert status_field(out, "CapEff") == "0000000000000000"
    assert status_field(out, "NoNewPrivs") == "1"
    assert status_field(out, "Seccomp") == "2"
    for ns in ("user", "uts", "ipc", "pid", "net"):
        ours = os.readlink(f"/proc/self/ns/{ns}")
        inside = next(line for line in out.splitlines() if line.split()[-3:-2] == [ns])
        assert ours not in inside, f"{ns} namespace shared with LACA"


def test_approved_write_lands_in_workspace_owned_by_the_user(ws: Path, home: Path) -> None:
    teps, _ = engine(ws, home, ["y"])
    result = run(teps, "mkdir -p out && echo hello > out/new.txt")
    assert result["status"] == "success", result
    assert (ws / "out" / "new.txt").read_text() == "hello\n"
    assert (ws / "out" / "new.txt").stat().st_uid == os.getuid()


def test_write_outside_the_workspace_fails_and_says_why(ws: Path, home: Path) -> None:
    # the user's real home: not under /tmp (private inside the sandbox) and not the tests' throwaway HOME
    outside = Path(tempfile.mkdtemp(prefix=".laca-test-outside-", dir=pwd.getpwuid(os.getuid()).pw_dir))
    try:
        teps, _ = engine(ws, home, ["y"])
        result = run(teps, f"echo x > {outside}/planted.txt")
        assert not (outside / "planted.txt").exists()
        assert result["data"]["exit_code"] != 0
        assert "read-only" in result["data"]["sandbox"]
    finally:
        shutil.rmtree(outside)


def test_the_hosts_tmp_is_not_the_commands_tmp(ws: Path, home: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    teps, _ = engine(ws, home, ["y"])
    result = run(teps, f"echo x > {tmp_path}/outside/planted.txt")
    assert not (tmp_path / "outside" / "planted.txt").exists()
    assert "own empty /tmp" in result["data"]["sandbox"]


def test_safe_command_sees_the_workspace_read_only(ws: Path, home: Path) -> None:
    sandbox = Sandbox("workspace-write", ws.resolve(), home=home, use_overlay=False)
    with sandbox.launch(cwd=ws, writes=False, network=False) as launch:
        done = subprocess.run([*launch.argv, "bash", "-c", "touch x"], pass_fds=launch.pass_fds,
                              capture_output=True, text=True)
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert not (ws / "x").exists()


def test_laca_environment_is_invisible_to_commands(ws: Path, home: Path, monkeypatch) -> None:
    monkeypatch.setenv("LACA_TEST_PROVIDER_API_KEY", "sk-this-must-not-leak")
    teps, _ = engine(ws, home, ["y"])  # reading another process's environment asks
    out = run(teps, "cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'")["data"]
    assert "sk-this-must-not-leak" not in out["stdout"] + out["stderr"]


def test_credentials_are_hidden(ws: Path, home: Path) -> None:
    teps, _ = engine(ws, home, ["y", "y"])
    out = run(teps, f"cat {home}/.ssh/id_rsa; ls -A {home}/.ssh")["data"]
    assert "PRIVATE-KEY-MATERIAL" not in out["stdout"]
    assert "id_rsa" not in out["stdout"]
    out = run(teps, f"cat {home}/.netrc")["data"]
    assert "NETRC-SECRET" not in out["stdout"]


def _listener() -> tuple[socket.socket, list[bool]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    hits: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = server.accept()
            hits.append(True)
            conn.close()
        except OSError:
            pass
    threading.Thread(target=accept, daemon=True).start()
    return server, hits


def test_no_network_for_an_approved_command_that_was_not_judged_a_network_one(ws: Path, home: Path) -> None:
    server, hits = _listener()
    port = server.getsockname()[1]
    teps, _ = engine(ws, home, ["y"])
    result = run(teps, f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'")
    server.close()
    assert result["data"]["exit_code"] != 0
    assert hits == []


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_an_approved_network_command_gets_the_network(ws: Path, home: Path) -> None:
    server, hits = _listener()
    port = server.getsockname()[1]
    teps, approver = engine(ws, home, ["y"])
    run(teps, f"curl -s -m 2 http://127.0.0.1:{port}/ || true")
    wait_until(lambda: hits, 3)
    server.close()
    assert hits == [True]
    assert "NETWORK ALLOWED" in (approver.seen[0].sandbox_note or "")


def test_seccomp_blocks_terminal_injection(ws: Path, home: Path) -> None:
    probe_py = ws / "tiocsti.py"
    probe_py.write_text("import errno, fcntl, os, termios\nfd = os.open('/dev/null', os.O_RDONLY)\n"
                        "try:\n    fcntl.ioctl(fd, termios.TIOCSTI, b'x')\nexcept OSError as e:\n"
                        "    print(errno.errorcode[e.errno])\n")
    teps, _ = engine(ws, home, ["y"])
    assert run(teps, "python3 tiocsti.py")["data"]["stdout"].strip() == "EPERM"


def test_leaving_the_sandbox_is_one_explicit_answer(ws: Path, home: Path) -> None:
    teps, approver = engine(ws, home, [ApprovalAnswer("once", unsandboxed=True), "y"])
    command = "readlink /proc/self/ns/user > ns.txt; cat ns.txt"
    out = run(teps, command)["data"]["stdout"]
    assert os.readlink("/proc/self/ns/user") in out
    assert approver.seen[0].can_unsandbox
    out = run(teps, command)["data"]["stdout"]
    assert os.readlink("/proc/self/ns/user") not in out  # not remembered


def test_panel_says_network_before_the_answer(ws: Path, home: Path) -> None:
    teps, approver = engine(ws, home, ["n", "n"])
    run(teps, "curl -s https://example.invalid/")
    assert "NETWORK ALLOWED" in (approver.seen[0].sandbox_note or "")  # curl uses the network
    run(teps, "touch f")  # a command that does not use the network is offered none
    assert "no network" in (approver.seen[1].sandbox_note or "")


def test_without_a_sandbox_rules_no_longer_auto_allow(ws: Path, home: Path) -> None:
    rules = RuleSet([Rule("touch", "allow", "test", prefix=("touch",))])
    teps, approver = engine(ws, home, ["n"], rules=rules, bwrap=str(ws / "no-such-bwrap"))
    assert not teps.sandbox.active
    result = run(teps, "touch made-by-rule.txt")
    assert result["status"] == "declined_by_user"
    assert "NO SANDBOX" in (approver.seen[0].sandbox_note or "")
    assert not (ws / "made-by-rule.txt").exists()


def test_sandbox_profile_read_only_blocks_approved_writes(ws: Path, home: Path) -> None:
    teps, _ = engine(ws, home, ["y"], profile="read-only")
    result = run(teps, "echo x > f.txt")
    assert not (ws / "f.txt").exists()
    assert "read-only" in result["data"]["sandbox"]


def _git_workspace(ws: Path) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
    (ws / "README.md").write_text("hello\n")
    subprocess.run(["git", "-C", str(ws), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", "init"], check=True, env=env)


def _tree(ws: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(ws)): (p.read_bytes() if p.is_file() else None) for p in sorted(ws.rglob("*"))
            if ".git/objects" not in str(p) and ".git/logs" not in str(p)}


@pytest.mark.parametrize("overlay", [False, True], ids=["direct", "overlay"])
def test_control_paths_stay_read_only_while_git_work_succeeds(ws: Path, home: Path, overlay: bool) -> None:
    _git_workspace(ws)
    hooks_before = sorted(p.name for p in (ws / ".git" / "hooks").iterdir())
    config_before = (ws / ".git" / "config").read_bytes()
    calls = [
        "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        "git config core.hooksPath /elsewhere",
        "mkdir -p .laca && printf 'rules: []\\n' > .laca/rules.yaml",
        "printf '{\"mcpServers\": {}}' > .mcp.json",
        "echo change >> README.md && echo new > notes.txt && git add -A && git commit -qm work",
    ]
    teps, _ = engine(ws, home, ["y"] * len(calls), overlay=overlay)
    results = teps.execute_batch([ToolRequest(f"r{i}", "executeBashCommand", {"command": c}, "test")
                                  for i, c in enumerate(calls)])
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir()) == hooks_before
    assert (ws / ".git" / "config").read_bytes() == config_before
    assert not (ws / ".laca").exists() and not (ws / ".mcp.json").exists()
    assert "tools.yaml" not in os.listdir(ws)  # no placeholder left behind for the ones never touched
    for r in results[:2]:  # existing control paths are read-only
        assert r.data["exit_code"] != 0
        assert "protected control path" in r.data["sandbox"], r.data
    for r in results[2:4]:  # missing ones may be made inside, but are not kept
        assert "not kept" in r.data["sandbox"], r.data
    assert results[4].data["exit_code"] == 0, results[4].data
    log = subprocess.run(["git", "-C", str(ws), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert log.split() == ["work", "init"]
    assert (ws / "notes.txt").read_text() == "new\n"
    committed = subprocess.run(["git", "-C", str(ws), "show", "--name-only", "--format=", "HEAD"],
                               capture_output=True, text=True).stdout.split()
    assert committed == ["README.md", "notes.txt"]  # `git add -A` saw no placeholder


def test_nested_repositories_are_protected_too(ws: Path, home: Path) -> None:
    _git_workspace(ws / "vendor" / "lib")
    teps, _ = engine(ws, home, ["y"])
    result = run(teps, "echo evil > vendor/lib/.git/hooks/post-checkout")
    assert not (ws / "vendor" / "lib" / ".git" / "hooks" / "post-checkout").exists()
    assert "protected control path" in result["data"]["sandbox"]


def test_a_stopped_write_is_said_even_when_the_command_exits_0(ws: Path, home: Path) -> None:
    _git_workspace(ws)
    teps, _ = engine(ws, home, ["y"])
    result = run(teps, "echo evil > .git/hooks/pre-commit; echo fine")
    assert result["data"]["exit_code"] == 0
    assert "protected control path" in result["data"]["sandbox"]


def test_undo_reverts_an_approved_reset_delete_append_and_create_exactly(ws: Path, home: Path) -> None:
    from tests.unit.sandbox.overlay_kit import diff_manifests, manifest

    _git_workspace(ws)
    (ws / "src").mkdir()
    (ws / "src" / "m.py").write_text("x = 1\n")
    (ws / "keep.txt").write_text("keep\n")
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "-C", str(ws), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", "second"], check=True, env=env)
    before = manifest(ws, skip=(".git/index",))
    head = subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    teps, _ = engine(ws, home, ["y"], overlay=True)
    result = run(teps, "git reset -q --hard HEAD~1 && rm -rf src && echo more >> keep.txt && echo new > NEW.txt")
    assert result["status"] == "success", result
    assert not (ws / "src").exists() and (ws / "NEW.txt").read_text() == "new\n"
    assert "created" in result["data"]["changes"] and "deleted" in result["data"]["changes"]
    reverted = teps.undo.revert(1, force=False)
    assert reverted.reverted, reverted.summary()
    assert diff_manifests(before, manifest(ws, skip=(".git/index",))) == []
    assert subprocess.run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True).stdout == head
    status = subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], capture_output=True, text=True).stdout
    assert status == ""


def test_a_safe_command_changes_nothing_and_records_nothing(ws: Path, home: Path) -> None:
    teps, _ = engine(ws, home, overlay=True)
    run(teps, "ls -la")
    assert teps.undo.entries() == []


def test_a_repository_the_command_creates_keeps_no_hook_or_executing_config(ws: Path, home: Path) -> None:
    teps, _ = engine(ws, home, ["y"], overlay=True)
    result = run(teps, "git init -q clean && git init -q evil && printf '#!/bin/sh\\necho pwned\\n' > "
                       "evil/.git/hooks/pre-commit && git -C evil config core.fsmonitor 'touch /tmp/x'")
    assert (ws / "clean" / ".git" / "config").is_file()  # git init and git clone still work
    assert any(p.name.endswith(".sample") for p in (ws / "clean" / ".git" / "hooks").iterdir())
    assert subprocess.run(["git", "-C", str(ws / "clean"), "status"], capture_output=True).returncode == 0
    assert not (ws / "evil" / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / "evil" / ".git" / "config").exists()  # it would run a program: not kept
    assert "not kept" in result["data"]["sandbox"] and "evil/.git/hooks/pre-commit" in result["data"]["sandbox"]


@pytest.mark.skipif(not os.access("/run", os.W_OK), reason="needs a writable /run to place a test socket there")
def test_host_sockets_under_run_are_out_of_reach(ws: Path, home: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="laca-test-", dir="/run"))
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(folder / "daemon.sock"))
        server.listen(1)
        teps, _ = engine(ws, home, ["y"])
        result = run(teps, f"python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
                           f"s.connect(\"{folder}/daemon.sock\")'")
        assert result["data"]["exit_code"] != 0
        server.settimeout(0.5)
        with pytest.raises(OSError):
            server.accept()
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_workspace_that_cannot_be_overlaid_is_said_once(ws: Path, home: Path) -> None:
    sandbox = Sandbox("workspace-write", ws.resolve(), home=home)
    sandbox.report.overlay, sandbox.report.overlay_error = False, "overlayfs refused this file system"
    notice = sandbox.unavailable_notice() or ""
    assert "cannot be overlaid" in notice and "/undo covers file writes only" in notice
    assert sandbox.mode_for(writes=True) == "write"  # commands still run, directly
