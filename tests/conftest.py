"""Shared fixtures. Every test runs with a private HOME / XDG dirs and no real API keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENROUTER_API_KEY",
            "GEMINI_API_KEY", "LACA_PROVIDER", "LACA_MODEL", "LACA_PERSONA", "LACA_CONTEXT_FILE")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace the user's own config trusts (`trusted_workspaces`), as for a project the user set up: its
    framework_config.yaml, .mcp.json and tools.yaml apply. Tests of workspace trust use `untrusted_workspace`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "laca" / "config.yaml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f"trusted_workspaces: [{str(ws.resolve())!r}]\n")
    monkeypatch.chdir(ws)
    return ws


@pytest.fixture
def untrusted_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "cloned"
    ws.mkdir()
    monkeypatch.chdir(ws)
    return ws
