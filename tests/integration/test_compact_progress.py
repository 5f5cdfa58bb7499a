"""/compact is not silent: it says what it does, shows its retries, and its tokens are counted."""

from __future__ import annotations

from framework_core.core.events import ModelRequestStarted, Notice, RetryScheduled
from tests.fakes.script import Fault, Reply
from tests.integration.conftest import Rig


def test_compact_shows_progress_and_retries_and_counts_its_tokens(rig: Rig) -> None:
    for i in range(3):
        rig.server.enqueue(Reply(text=f"answer {i}"))
        rig.agent.run_turn(f"question {i}")
    before, last = rig.agent.session.usage, rig.agent.session.last_usage
    rig.events.clear()
    rig.server.enqueue(Reply(fault=Fault.http(503)), Reply(text="SUMMARY: three questions.", usage=(1234, 56)))
    note = rig.facade.compact()
    assert "summarised" in note
    kinds = [type(e) for e in rig.events]
    assert Notice in kinds and ModelRequestStarted in kinds and RetryScheduled in kinds
    assert kinds.index(ModelRequestStarted) < kinds.index(RetryScheduled)
    assert any(isinstance(e, Notice) and "Summarising" in e.text for e in rig.events)
    assert rig.agent.session.usage.output_tokens == before.output_tokens + 56
    assert rig.agent.session.last_usage == last  # the summary request does not describe the conversation
