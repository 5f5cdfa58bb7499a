"""The home and the environment by allowlist, with real sandboxed processes.

The home is a real folder outside /tmp (under the repository's `.pytest-homes/`, ignored by git): a home under
/tmp disappears behind the sandbox's private /tmp anyway, so a test there would pass without testing anything.
Only one test puts the home under /tmp on purpose, to show it is shown the same way.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import uuid
import zipfile
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.policy.decide import PolicyState
from framework_core.policy.rules import RuleSet
from framework_core.sandbox.probe import probe
from tests.unit.sandbox.overlay_kit import system_python
from framework_core.sandbox.sandbox import Sandbox
from framework_core.teps import TEPSEngine

pytestmark = pytest.mark.skipif(not probe().available,
                                reason="no sandbox on this machine: " + "; ".join(probe().missing()))

ROOT = Path(__file__).resolve().parents[3]
PYTHON = system_python()
GITCONFIG = """[user]
\tname = Ada Home
\temail = ada@example.invalid
[credential]
\thelper = store --file /somewhere/creds
[credential "https://git.example"]
\tusername = ada
[url "https://ghp_SECRETTOKEN@github.com/"]
\tinsteadOf = https://github.com/
"""


def _make_home(base: Path) -> Path:
    home = base / "home"
    (home / ".config" / "sometool").mkdir(parents=True)
    (home / ".config" / "sometool" / "token").write_text("SOMETOOL-SECRET\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-MATERIAL\n")
    (home / ".gitconfig").write_text(GITCONFIG)
    (home / ".npmrc").write_text("registry=https://npm.example/\n//npm.example/:_authToken=NPM-SECRET\n")
    return home


@pytest.fixture
def base() -> Iterator[Path]:
    folder = ROOT / ".pytest-homes" / uuid.uuid4().hex[:12]
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def home(base: Path) -> Path:
    return _make_home(base)


def engine(ws: Path, home: Path, cache: Path, answers: int = 0, env: dict[str, str] | None = None) -> TEPSEngine:
    sandbox = Sandbox("workspace-write", ws.resolve(), home=home, cache_root=cache)
    environ = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", **(env or {})}
    return TEPSEngine({}, workspace=ws, approver=ScriptedApprover(["y"] * answers), env=environ, sandbox=sandbox,
                      policy=PolicyState(rules=RuleSet(), allow_dangerous=True))


def bash(teps: TEPSEngine, command: str) -> dict:
    return teps.execute_tool({"request_id": "r", "tool_name": "executeBashCommand",
                              "parameters": {"command": command}, "icerc_full_text": "test"})["data"]


def test_an_unknown_tools_credentials_and_ssh_keys_do_not_exist_inside(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    teps = engine(ws, home, base / "cache", answers=2)
    h = shlex.quote(str(home))  # the clone may sit in a path with spaces
    out = bash(teps, f"cat {h}/.config/sometool/token; ls -A {h}/.ssh; ls -A {h}/.config")
    assert "SOMETOOL-SECRET" not in out["stdout"] and "id_ed25519" not in out["stdout"]
    assert "sometool" not in out["stdout"]
    assert "No such file" in out["stderr"]
    note = out.get("sandbox", "")  # says what was withheld, and how to allow it
    assert "not shown inside the sandbox:" in note and "~/.config." in note and "~/.ssh" in note, out
    assert "home_allow" in out["sandbox"]


def test_configuration_is_shown_without_its_credentials(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    teps = engine(ws, home, base / "cache", answers=1)
    out = bash(teps, "cat ~/.gitconfig ~/.npmrc")
    assert "Ada Home" in out["stdout"] and "registry=https://npm.example/" in out["stdout"]
    for secret in ("helper", "/somewhere/creds", "ghp_SECRETTOKEN", "NPM-SECRET", "username = ada"):
        assert secret not in out["stdout"], secret


def test_a_secret_under_any_name_never_reaches_a_command(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    teps = engine(ws, home, base / "cache", answers=1, env={"MY_SERVICE_PASS": "hunter2-secret"})
    out = bash(teps, "env")
    assert "hunter2-secret" not in out["stdout"] and "MY_SERVICE_PASS" not in out["stdout"]
    assert "MY_SERVICE_PASS" in out["env_withheld"]  # the model is told the name, never the value
    assert "LANG=C.UTF-8" in out["stdout"]


def test_proxy_variables_only_with_the_network(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    teps = engine(ws, home, base / "cache", answers=1, env={"HTTPS_PROXY": "http://proxy.example:3128"})
    assert "proxy.example" not in bash(teps, "env")["stdout"]
    sandbox = teps.sandbox
    with sandbox.launch(cwd=ws, writes=False, network=True) as launch:
        done = subprocess.run([*launch.argv, "bash", "-c", "echo $HTTPS_PROXY"], capture_output=True, text=True,
                              pass_fds=launch.pass_fds, env={"HTTPS_PROXY": "http://proxy.example:3128",
                                                             "PATH": os.environ["PATH"]})
    assert "proxy.example" in done.stdout


def test_without_the_network_package_managers_are_told_they_are_offline(base: Path, home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """npm then answers ENOTCACHED at once (it otherwise retries an unreachable registry for about a minute); a
    value the user set in LACA's environment is kept; with the network nothing is set."""
    ws = base / "ws"
    ws.mkdir()
    for name in ("npm_config_offline", "CARGO_NET_OFFLINE", "UV_OFFLINE", "PIP_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOPROXY", "file:///mirror")
    teps = engine(ws, home, base / "cache", answers=1, env={"GOPROXY": "file:///mirror"})
    out = bash(teps, "echo $npm_config_offline $CARGO_NET_OFFLINE $UV_OFFLINE $GOPROXY $PIP_RETRIES")
    assert out["stdout"].split() == ["true", "true", "1", "file:///mirror", "0"], out
    with teps.sandbox.launch(cwd=ws, writes=False, network=True) as launch:
        done = subprocess.run([*launch.argv, "bash", "-c", "echo ${npm_config_offline:-unset}"], capture_output=True,
                              text=True, pass_fds=launch.pass_fds, env={"PATH": os.environ["PATH"]})
    assert done.stdout.strip() == "unset"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_needing_a_registry_without_the_network_fails_at_once_with_a_note(base: Path, home: Path) -> None:
    ws = base / "ws"
    (ws / "app").mkdir(parents=True)
    (ws / "lib").mkdir()
    (ws / "lib" / "package.json").write_text('{"name": "lib", "version": "1.0.0"}')
    (ws / "app" / "package.json").write_text('{"name": "app", "version": "1.0.0", "dependencies": {"is-odd": "3"}}')
    teps = engine(ws, home, base / "cache", answers=1)
    out = bash(teps, "cd app && npm install --no-audit ../lib")  # judged offline: a package named by path
    assert out["exit_code"] != 0 and "ENOTCACHED" in out["stderr"], out
    assert out["duration_s"] < 30, out
    assert "gave this command no network" in out["sandbox"], out


def test_a_unix_socket_listening_in_the_home_is_unreachable(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    path = home / ".local" / "run" / "agent.sock"
    path.parent.mkdir(parents=True)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        server.listen(1)
        probe_client = socket.socket(socket.AF_UNIX)  # it does listen: outside the sandbox a client connects
        probe_client.connect(str(path))
        server.accept()[0].close()
        probe_client.close()
        teps = engine(ws, home, base / "cache", answers=1)
        out = bash(teps, f"{PYTHON} -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{path}\")'")
        assert out["exit_code"] != 0
        server.settimeout(0.3)
        with pytest.raises(OSError):
            server.accept()
    finally:
        server.close()


def _wheel(folder: Path) -> Path:
    wheel = folder / "homedemo-0.1-py3-none-any.whl"
    files = {"homedemo.py": "VALUE = 42\n",
             "homedemo-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: homedemo\nVersion: 0.1\n",
             "homedemo-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                             "Tag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "homedemo-0.1.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in {**files, "homedemo-0.1.dist-info/RECORD": record}.items():
            z.writestr(name, text)
    return wheel


def test_a_venv_and_pip_install_of_a_local_wheel_work_with_a_writable_cache(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    wheel = _wheel(ws)
    cache = base / "cache"
    teps = engine(ws, home, cache, answers=2)
    out = bash(teps, f"{PYTHON} -m venv .venv && .venv/bin/pip install --no-index {wheel.name} "
                     "&& .venv/bin/python -c 'import homedemo; print(homedemo.VALUE)'")
    assert out["exit_code"] == 0, out
    assert out["stdout"].strip().endswith("42")
    assert (ws / ".venv" / "bin" / "python").exists()
    out = bash(teps, "mkdir -p ~/.cache/pip && echo kept > ~/.cache/pip/probe && .venv/bin/pip cache dir")
    assert out["exit_code"] == 0, out
    assert (cache / ".cache" / "pip" / "probe").read_text() == "kept\n"  # LACA's own cache, persistent
    assert not (home / ".cache").exists()  # never the user's real one


@pytest.mark.skipif(shutil.which("npx") is None, reason="npm is not installed")
def test_npx_runs_a_package_with_an_empty_npm_cache(base: Path, home: Path) -> None:
    """`npx -y` installs into ~/.npm/_npx before it runs anything: it needs ~/.npm writable from nothing."""
    ws = base / "ws"
    (ws / "hello-pkg" / "bin").mkdir(parents=True)
    (ws / "hello-pkg" / "package.json").write_text('{"name": "hello-pkg", "version": "1.0.0", '
                                                    '"bin": {"hello-pkg": "bin/hello.js"}}')
    (ws / "hello-pkg" / "bin" / "hello.js").write_text("#!/usr/bin/env node\nconsole.log('hello from npx')\n")
    (ws / "hello-pkg" / "bin" / "hello.js").chmod(0o755)
    cache = base / "cache"
    teps = engine(ws, home, cache, answers=1)
    out = bash(teps, "npx -y ./hello-pkg && npm config get cache")
    assert out["exit_code"] == 0, out
    assert "hello from npx" in out["stdout"] and out["stdout"].strip().endswith(f"{home}/.npm")
    assert (cache / ".npm" / "_npx").is_dir()
    assert not (home / ".npm").exists()


def _git_commit(teps: TEPSEngine) -> dict:
    return bash(teps, "git init -q && git commit -q --allow-empty -m first && git log --format='%an <%ae>' "
                      "&& git config --global --get credential.helper; true")


def test_git_commit_sees_the_identity_of_the_users_gitconfig(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    out = _git_commit(engine(ws, home, base / "cache", answers=1))
    assert "Ada Home <ada@example.invalid>" in out["stdout"], out
    assert "store" not in out["stdout"]


def test_a_home_under_tmp_is_shown_the_same_way(tmp_path: Path, base: Path) -> None:
    home = _make_home(tmp_path)
    ws = base / "ws"
    ws.mkdir()
    teps = engine(ws, home, base / "cache", answers=2)
    out = _git_commit(teps)
    assert "Ada Home <ada@example.invalid>" in out["stdout"], out
    assert "SOMETOOL-SECRET" not in bash(teps, f"cat {shlex.quote(str(home))}/.config/sometool/token")["stdout"]


def test_a_workspace_under_the_home_works(base: Path, home: Path) -> None:
    ws = home / "src" / "project"
    ws.mkdir(parents=True)
    (ws / "README.md").write_text("hello\n")
    teps = engine(ws, home, base / "cache", answers=2)
    assert not teps.sandbox.workspace_is_home
    out = bash(teps, "cat README.md && echo new > notes.txt")
    assert out["exit_code"] == 0 and "hello" in out["stdout"], out
    assert (ws / "notes.txt").read_text() == "new\n"
    out = bash(teps, f"cat {shlex.quote(str(home))}/.config/sometool/token")
    assert "SOMETOOL-SECRET" not in out["stdout"]


def test_writes_elsewhere_in_the_home_are_said_not_kept(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    teps = engine(ws, home, base / "cache", answers=1)
    out = bash(teps, "echo x > ~/.somerc && mkdir -p ~/.config/newtool && echo y > ~/.config/newtool/c")
    assert out["exit_code"] == 0, out
    assert "not kept" in out["sandbox"] and "~/.somerc" in out["sandbox"] and "~/.config" in out["sandbox"]
    assert not (home / ".somerc").exists()


def test_a_home_config_write_not_kept_says_where_it_could_go_instead(base: Path, home: Path) -> None:
    ws = base / "ws"
    ws.mkdir()
    out = bash(engine(ws, home, base / "cache", answers=1), "echo fund=false >> ~/.npmrc")
    assert "read-only" in out["sandbox"] and "npm config set --location=project" in out["sandbox"], out
    (home / ".npmrc").unlink()  # a user without one: npm config set makes it
    out = bash(engine(ws, home, base / "cache", answers=1), "echo fund=false >> ~/.npmrc")
    assert "not kept" in out["sandbox"] and "~/.npmrc" in out["sandbox"], out
    assert "npm config set --location=project" in out["sandbox"], out
    assert not (home / ".npmrc").exists()


def test_a_workspace_that_is_the_home_runs_commands_read_only(base: Path, home: Path) -> None:
    teps = engine(home, home, base / "cache", answers=1)
    sandbox = teps.sandbox
    assert sandbox.workspace_is_home and not sandbox.is_complete()
    assert "read-only" in (sandbox.home_notice() or "")
    out = bash(teps, "echo evil >> .bashrc; cat .ssh/id_ed25519")
    assert out["exit_code"] != 0 and "home folder" in out["sandbox"], out
    assert not (home / ".bashrc").exists()
    assert "PRIVATE-KEY-MATERIAL" not in out["stdout"]
    assert Sandbox("workspace-write", Path("/"), home=home).workspace_is_home
