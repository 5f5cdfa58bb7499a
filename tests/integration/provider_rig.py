"""An agent wired to one provider entry written out in full (type, model, extra settings), for wire tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.config.load import Overrides, load_config
from framework_core.core.session import open_session
from framework_core.app.wiring import build_agent
from tests.fakes.base import FakeServerBase
from tests.integration.conftest import Rig


def provider_rig(server: FakeServerBase, workspace: Path, monkeypatch: pytest.MonkeyPatch, *, api_type: str,
                 model: str, extra: str = "", key: str = "test-key-openai") -> Rig:
    """`extra`: more lines of the entry, each indented by four spaces."""
    server._queue.clear()
    (workspace / "framework_config.yaml").write_text(
        f"llm_provider: p\nllm_settings:\n  p:\n    type: {api_type}\n    base_url: {server.base_url}\n"
        f"    model: {model}\n    api_key_env_var: LACA_TEST_KEY\n    request_timeout_s: 1\n{extra}"
        "retry:\n  initial_delay_s: 0.01\n  max_delay_s: 0.2\n")
    monkeypatch.setenv("LACA_TEST_KEY", key)
    events: list = []
    approver = ScriptedApprover()
    session = open_session(workspace.parent / "data")
    parts = build_agent(load_config(workspace, Overrides()), events=events.append, approver=approver,
                        session=session, start_mcp=False)
    return Rig(parts.agent, approver, events, server, workspace, parts.facade)
