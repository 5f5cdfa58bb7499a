from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.agent import Agent
from framework_core.core.facade import Facade
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture(scope="session")
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key="test-key-openai") as server:
        yield server


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(api_key="test-key-anthropic") as server:
        yield server


@dataclass
class Rig:
    agent: Agent
    approver: ScriptedApprover
    events: list
    server: FakeOpenAIServer | FakeAnthropicServer
    workspace: Path
    facade: Facade | None = None  # tests that build only an agent leave it out


@pytest.fixture(params=["openai", "anthropic"])
def rig(request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    return make_rig(request.param, request, workspace, monkeypatch)


def make_rig(wire: str, request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    server = request.getfixturevalue(f"{wire}_server")
    server._queue.clear()
    cfg_file = workspace / "framework_config.yaml"
    cfg_file.write_text(
        f"llm_provider: {wire}\nllm_settings:\n  {wire}:\n    type: {wire}\n    base_url: {server.base_url}\n"
        f"    model: fake-model\n    request_timeout_s: 1\nretry:\n  initial_delay_s: 0.01\n  max_delay_s: 0.2\n")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-anthropic")
    loaded = load_config(workspace, Overrides())
    events: list = []
    approver = ScriptedApprover()
    session = open_session(workspace.parent / "data")
    parts = build_agent(loaded, events=events.append, approver=approver, session=session, start_mcp=False)
    return Rig(parts.agent, approver, events, server, workspace, parts.facade)


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp (under the repository's `.pytest-homes/`, ignored by git): each sandboxed command
    gets a private /tmp, so a workspace or HOME there would prove nothing."""
    import tempfile

    from framework_core.sandbox.transaction import remove_deep

    base = Path(__file__).resolve().parents[2] / ".pytest-homes"
    base.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="it-", dir=base))
    yield folder
    remove_deep(str(folder))
