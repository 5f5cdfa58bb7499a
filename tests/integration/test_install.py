"""The package as a user installs it: a wheel built from this source (`pip install .`, not editable) into a fresh
virtual environment, then `laca` run from another directory finds the config, context, personas and documents
it ships with.

Offline: the wheel is built with the build backend already installed here (no build isolation, no index), and
the fresh environment reaches the dependencies installed here through a `.pth` line added after LACA itself
is installed, so what it imports as `framework_core` is the installed copy, never this checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply

ROOT = Path(__file__).resolve().parents[2]
NOT_SOURCE = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                   "_defaults")
PIP = ("--disable-pip-version-check", "--no-cache-dir", "--no-index", "--no-deps")


@dataclass
class Installed:
    venv: Path
    laca: Path
    elsewhere: Path  # a directory that is neither the checkout nor the virtual environment


def _run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    run = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, f"{argv} failed:\n{run.stdout}\n{run.stderr}"
    return run


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("install")
    source, wheels, venv = base / "source", base / "wheels", base / "venv"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)  # what a fresh clone holds: the build writes into its tree
    _run(sys.executable, "-m", "pip", "wheel", *PIP, "--no-build-isolation", "--wheel-dir", wheels, ".", cwd=source)
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=base)
    python = venv / "bin" / "python"
    (wheel,) = wheels.glob("laca-*.whl")
    _run(sys.executable, "-m", "pip", "--python", python, "install", *PIP, wheel, cwd=base)
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=base).stdout.strip()
    ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (Path(site) / "laca-test-dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return Installed(venv, venv / "bin" / "laca", elsewhere)


def user_env(**extra: str) -> dict[str, str]:
    """The test's private HOME and XDG dirs, no keys, nothing that points Python at this checkout."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_BASE_URL")) and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, **extra}


def test_installed_package_is_imported_from_the_environment(installed: Installed) -> None:
    run = _run(installed.venv / "bin" / "python", "-c",
               "import framework_core.config.shipped as s; print(s.__file__); print(s.shipped_dir())",
               cwd=installed.elsewhere, env=user_env())
    module, shipped = (Path(line) for line in run.stdout.split())
    assert module.is_relative_to(installed.venv), module
    assert shipped == module.parents[1] / "_defaults"  # framework_core/_defaults
    for name in ("framework_config.yaml", "FRAMEWORK_CONTEXT.md", "personas/forge.md", "personas/catalyst.md",
                 "docs/engineering_standards.md", "docs/tool_use.md"):
        assert (shipped / name).read_text() == (ROOT / name).read_text(), name


def test_version_and_config_outside_the_repository(installed: Installed) -> None:
    version = _run(installed.laca, "--version", cwd=installed.elsewhere, env=user_env())
    assert version.stdout.startswith("laca ")
    show = _run(installed.laca, "config", "show", "--all", cwd=installed.elsewhere, env=user_env()).stdout
    shipped = installed.venv.resolve()
    assert f"Workspace: {installed.elsewhere.resolve()}" in show
    files_read = next(line for line in show.splitlines() if line.startswith("Files read:"))
    assert str(shipped) in files_read and files_read.endswith("_defaults/framework_config.yaml"), files_read
    assert "llm_provider = openai" in show and "default_persona = forge" in show
    assert "llm_settings.anthropic.type = anthropic" in show  # every shipped provider, not "none configured"


def test_one_shot_outside_the_repository_uses_the_shipped_context(installed: Installed) -> None:
    env = user_env(OPENAI_API_KEY="k")
    with FakeOpenAIServer() as server:
        env["OPENAI_BASE_URL"] = server.base_url
        server.enqueue(Reply(text="Hello from the installed package."), Reply(text="Catalyst here."))
        forge = _run(installed.laca, "-p", "hi", cwd=installed.elsewhere, env=env)
        forge_prompt = server.sent_messages(0)[0]
        catalyst = _run(installed.laca, "--persona", "catalyst", "-p", "hi", cwd=installed.elsewhere, env=env)
        catalyst_prompt = server.sent_messages(1)[0]
    assert forge.stdout.strip() == "Hello from the installed package."
    assert catalyst.stdout.strip() == "Catalyst here."
    for run in (forge, catalyst):
        assert "skipped" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert forge_prompt["role"] == catalyst_prompt["role"] == "system"
    for name in ("personas/forge.md", "docs/engineering_standards.md", "docs/tool_use.md"):
        assert (ROOT / name).read_text().strip() in forge_prompt["content"], f"{name} is not in the system prompt"
    assert (ROOT / "personas/catalyst.md").read_text().strip() in catalyst_prompt["content"]
    assert (ROOT / "personas/forge.md").read_text().strip() not in catalyst_prompt["content"]
