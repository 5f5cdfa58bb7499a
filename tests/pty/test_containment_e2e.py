"""Containment end to end, as a user meets it: in ONE reply the model asks for several commands, every question
is answered `y` (the REPL) or nothing is asked (`-p --permission-mode auto`), and only what is known to be data
lands (docs/ARCHITECTURE.md, "Two layers of safety").

The payloads run through a script (`python3 payload.py KIND`), so the policy sees an ordinary command that asks:
what stops them is the sandbox and the gate, not a pattern in the policy. Every payload is harmless (a `touch` of
a marker inside the throwaway folder). HOME and the workspace are real folders outside /tmp (under the
repository's `.pytest-homes/`, ignored by git): each command gets a private /tmp, so a home there would hide
itself and prove nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pexpect
import pytest

from framework_core.sandbox.probe import probe
from framework_core.sandbox.transaction import remove_deep
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "forge>"

pytestmark = pytest.mark.skipif(not probe().available, reason="no sandbox on this machine")

PAYLOAD = textwrap.dedent('''\
    """Harmless payloads: each would `touch` a marker in the throwaway folder if git ever ran it."""
    import os, socket, subprocess, sys

    BASE = sys.argv[2]

    def write(path, text, mode=None):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if mode is not None:
            os.chmod(path, mode)

    def repo(folder, marker):
        """A folder git takes for a repository, whose config runs a program on the next git status."""
        write(f"{folder}/HEAD", "ref: refs/heads/main\\n")
        os.makedirs(f"{folder}/objects", exist_ok=True)
        os.makedirs(f"{folder}/refs/heads", exist_ok=True)
        write(f"{folder}/config", f"[core]\\n\\tfsmonitor = touch {BASE}/pwned-{marker}\\n")
        write(f"{folder}/hooks/pre-commit", f"#!/bin/sh\\ntouch {BASE}/pwned-{marker}-hook\\n", 0o755)

    kind = sys.argv[1]
    if kind == "commondir":
        repo("cd", "commondir")
        write(".git/commondir", "../cd\\n")
    elif kind == "gitfile":
        repo("x", "gitfile")
        write("inner/.git", "gitdir: ../x\\n")
    elif kind == "submodule":
        repo("evil", "submodule")
        write("sub/.git", "gitdir: ../evil\\n")
    elif kind == "bare":  # git enters objects through the symlink: src is a repository to it
        os.makedirs("realobjs", exist_ok=True)
        repo("src", "bare")
        os.rmdir("src/objects")
        os.symlink("../realobjs", "src/objects")
        with open("src/config", "a") as f:
            f.write(f"\\tpager = touch {BASE}/pwned-bare-pager\\n")
    elif kind == "include":
        write("inc.cfg", f"[core]\\n\\tfsmonitor = touch {BASE}/pwned-include\\n")
        subprocess.run(["git", "-C", "nested", "config", "include.path", "../../inc.cfg"])  # bound read-only
        subprocess.run(["git", "init", "-q", "nested2"], check=True)  # a new one: only the gate stands between
        subprocess.run(["git", "-C", "nested2", "config", "include.path", "../../inc.cfg"], check=True)
    elif kind == "hook":
        for existing in (".git/hooks/pre-commit", "nested/.git/hooks/post-checkout"):
            try:
                write(existing, f"#!/bin/sh\\ntouch {BASE}/pwned-hook\\n", 0o755)
            except OSError as exc:
                print(existing, exc)
        subprocess.run(["git", "init", "-q", "hooked"], check=True)
        write("hooked/.git/hooks/pre-commit", f"#!/bin/sh\\ntouch {BASE}/pwned-hook3\\n", 0o755)
    elif kind == "setuid":
        write("tool.sh", "#!/bin/sh\\necho tool\\n")
        os.chmod("tool.sh", 0o4755)
    elif kind == "secrets":
        home = os.environ.get("HOME", "")
        for path in (f"{home}/.config/sometool/token", sys.argv[3]):
            try:
                print(path, "=", open(path).read())
            except OSError as exc:
                print(path, "unreadable:", exc)
        try:
            print("home holds:", sorted(os.listdir(home)))
        except OSError as exc:
            print("home unreadable:", exc)
        print("environment:", dict(os.environ))
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(sys.argv[3])
            s.sendall(b"hello from the sandbox")
            print("socket reached")
        except OSError as exc:
            print("socket unreachable:", exc)
''')


@dataclass
class Scene:
    base: Path
    home: Path
    ws: Path
    token_mark: str
    pass_mark: str
    listener: socket.socket
    sock_path: Path

    def env(self, server: FakeOpenAIServer) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        env.update({"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"),
                    "XDG_DATA_HOME": str(self.home / ".local" / "share"),
                    "XDG_CACHE_HOME": str(self.home / ".cache"), "MY_SERVICE_PASS": self.pass_mark,
                    "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url, "TERM": "xterm",
                    "LACA_TYPEAHEAD_GUARD_S": "0", "COLUMNS": "120", "LINES": "40", "PROMPT_TOOLKIT_NO_CPR": "1"})
        env.pop("NO_COLOR", None)
        return env


def git(*args: str, cwd: Path) -> str:
    """git on the test's own set-up (nothing a command made has run yet)."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def scene() -> Iterator[Scene]:
    base_dir = ROOT / ".pytest-homes"
    base_dir.mkdir(exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="containment-", dir=base_dir))
    listener = socket.socket(socket.AF_UNIX)
    try:
        yield _set_up(base, listener)
    finally:
        listener.close()
        remove_deep(str(base))


def _set_up(base: Path, listener: socket.socket) -> Scene:
    home, ws = base / "home", base / "ws"
    token_mark, pass_mark = f"tok-{uuid.uuid4().hex}", f"pass-{uuid.uuid4().hex}"
    (home / ".config" / "sometool").mkdir(parents=True)
    (home / ".config" / "sometool" / "token").write_text(token_mark + "\n")
    (home / ".config" / "laca").mkdir(parents=True)
    (home / ".config" / "laca" / "config.yaml").write_text(f"trusted_workspaces: [{str(ws)!r}]\n")
    ws.mkdir()
    git("init", "-q", ".", cwd=ws)
    (ws / ".git" / "modules").mkdir()
    git("init", "-q", "--separate-git-dir", str(ws / ".git" / "modules" / "sub"), "sub", cwd=ws)
    git("init", "-q", "nested", cwd=ws)
    (ws / "payload.py").write_text(PAYLOAD)
    sock_path = home / "agent.sock"
    listener.bind(str(sock_path))
    listener.listen(8)
    listener.setblocking(False)
    return Scene(base, home, ws, token_mark, pass_mark, listener, sock_path)


def bash(command: str, n: int) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": command, "icerc_full_text": f"Command: {command}"},
                        id=f"call_{n}")


def one_reply(scene: Scene, *, with_write: bool) -> Reply:
    """Every payload and the ordinary work, asked for in one reply."""
    base = str(scene.base)
    kinds = ["commondir", "gitfile", "submodule", "bare", "include", "hook", "setuid"]
    commands = [f"python3 payload.py {k} {base}" for k in kinds]
    commands += [f"python3 payload.py secrets {base} {scene.home}/.config/sometool/token",
                 f"python3 payload.py socket {base} {scene.sock_path}",
                 "echo hello > notes.txt",
                 "git init -q newrepo && git -C newrepo -c user.name=t -c user.email=t@example.invalid "
                 "commit -q --allow-empty -m first"]
    calls = [bash(c, i) for i, c in enumerate(commands)]
    if with_write:
        calls.append(ToolCallSpec("writeFile", {"path": "written.txt", "content": "written by the model\n",
                                                "icerc_full_text": "Intent: a note"}, id="call_w"))
    return Reply(text="Doing all of it.", tool_calls=calls)


def assert_contained(scene: Scene, server: FakeOpenAIServer) -> None:
    ws, base = scene.ws, scene.base
    # git's redirections: not applied
    assert not (ws / ".git" / "commondir").exists()
    assert not (ws / "inner" / ".git").exists()
    assert (ws / "sub" / ".git").read_text().startswith(f"gitdir: {ws / '.git' / 'modules' / 'sub'}")
    assert "include" not in (ws / "nested" / ".git" / "config").read_text()
    assert not (ws / "nested2" / ".git" / "config").exists()  # its other files landed, not the config
    assert (ws / "nested2" / ".git" / "HEAD").is_file()
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / "nested" / ".git" / "hooks" / "post-checkout").exists()
    assert not (ws / "hooked" / ".git" / "hooks" / "pre-commit").exists()
    assert (ws / "hooked" / ".git" / "hooks" / "pre-commit.sample").is_file()  # git init's samples are data
    for fake_repo in ("cd", "x", "evil", "src"):  # the repositories they pointed at: their config and hooks stay out
        assert not (ws / fake_repo / "config").exists() and not (ws / fake_repo / "hooks" / "pre-commit").exists()
    # a file made setuid in the sandbox lands as an ordinary executable
    assert (ws / "tool.sh").stat().st_mode & 0o7777 == 0o755
    # nothing reached the model: not the unknown tool's token, not the unknown-name variable
    sent = json.dumps(server.requests)
    assert scene.token_mark not in sent and scene.pass_mark not in sent
    assert "unreadable" in sent and "socket unreachable" in sent  # the payloads ran, and failed
    # the socket in the home: no connection ever queued
    with pytest.raises(BlockingIOError):
        scene.listener.accept()
    # ordinary work in the same reply landed, and git uses the new repository outside LACA
    assert (ws / "notes.txt").read_text() == "hello\n"
    assert git("-C", "newrepo", "log", "--format=%s", cwd=ws).strip() == "first"
    assert sorted(p.name for p in base.iterdir() if p.name.startswith("pwned")) == []


def test_one_reply_of_redirections_and_leaks_with_every_question_answered_yes(scene: Scene,
                                                                              fake_openai: FakeOpenAIServer) -> None:
    fake_openai._queue.clear()
    fake_openai.requests.clear()
    fake_openai.enqueue(one_reply(scene, with_write=True), Reply(text="ALL-DONE-HERE"))
    child = pexpect.spawn(sys.executable, [str(ROOT / "run_framework.py"), "--provider", "openai", "--no-mcp"],
                          cwd=str(scene.ws), env=scene.env(fake_openai), encoding="utf-8", timeout=90,
                          dimensions=(40, 120))
    child.linesep = "\r"
    try:
        child.expect_exact(PROMPT)
        child.sendline("set everything up")
        answered = 0
        while child.expect_exact(["Allow?", "ALL-DONE-HERE"]) == 0:  # the question is drawn: keys reach it
            child.send("y\r")
            child.expect_exact("Allowed once.")  # (a question may be drawn twice: wait for its answer)
            answered += 1
        assert answered >= 11  # every command and the write asked, and each got a yes
        child.expect_exact(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    assert_contained(scene, fake_openai)
    assert (scene.ws / "written.txt").read_text() == "written by the model\n"


def test_the_same_reply_in_one_shot_auto_mode(scene: Scene, fake_openai: FakeOpenAIServer) -> None:
    fake_openai._queue.clear()
    fake_openai.requests.clear()
    fake_openai.enqueue(one_reply(scene, with_write=False), Reply(text="ALL-DONE-HERE"))
    done = subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--provider", "openai",
                           "--permission-mode", "auto", "-p", "set everything up"], cwd=scene.ws,
                          env=scene.env(fake_openai), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "ALL-DONE-HERE" in done.stdout
    assert "not kept" in json.dumps(fake_openai.requests)  # the model is told what was not applied
    assert_contained(scene, fake_openai)
