"""Tokens a user can see: per turn and in total, cache reads and writes, cost where prices are known; the same
figures after a resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from framework_core.core.accounting import all_tokens, status_total
from framework_core.core.session import load_transcript
from tests.fakes.script import Reply, ToolCallSpec, icerc
from tests.integration.provider_rig import provider_rig


def two_turns(rig) -> None:
    (rig.workspace / "notes.txt").write_text("a line\n" * 50)
    read = ToolCallSpec("readFile", {"path": "notes.txt", "icerc_full_text": icerc("read notes.txt")})
    rig.server.enqueue(Reply(tool_calls=[read]), Reply(text="Read it."), Reply(text="Hello again."))
    rig.agent.run_turn("Read notes.txt for me please")
    rig.agent.run_turn("hi")


@pytest.fixture
def claude(workspace: Path, monkeypatch: pytest.MonkeyPatch, anthropic_server):
    rig = provider_rig(anthropic_server, workspace, monkeypatch, api_type="anthropic", model="claude-sonnet-5-5",
                       key="test-key-anthropic")
    anthropic_server.reset()
    return rig


def rows(report: str) -> list[list[str]]:
    return [line.split() for line in report.splitlines()[1:4]]


def test_tokens_are_shown_per_turn_and_in_total_with_cache_and_cost(claude) -> None:
    two_turns(claude)
    session = claude.agent.session
    first, second = session.ledger.turns
    assert (first.requests, second.requests) == (2, 1)
    assert first.usage + second.usage == session.usage and session.usage.cache_write_tokens > 0
    report = claude.agent.usage_report()
    turn1, turn2, total = rows(report)
    assert turn1[:5] == ["1.", "Read", "notes.txt", "for", "me"] and turn2[:2] == ["2.", "hi"] and total[0] == "total"
    assert total[1:6] == [f"{n:,}" for n in (3, session.usage.input_tokens, session.usage.cache_read_tokens,
                                             session.usage.cache_write_tokens, session.usage.output_tokens)]
    cost = claude.agent.caps.prices.cost(session.usage)
    assert total[6] == f"${cost:.4f}" and f"Estimated cost: ${cost:.4f}" in report


def test_the_status_line_total_counts_cached_input_and_cost(claude) -> None:
    two_turns(claude)
    usage = claude.agent.session.usage
    text = status_total(usage, claude.agent.caps.prices)
    assert usage.cache_read_tokens > 0 and text.startswith(f"{all_tokens(usage):,} tok · $")
    from framework_core.ui.statusline import status_fragments

    assert f" · {text}" in "".join(part for _, part in status_fragments(claude.facade.status()))


def test_a_resumed_session_shows_the_same_turns(claude) -> None:
    two_turns(claude)
    session = claude.agent.session
    session.flush()
    loaded = load_transcript(session.transcript.path)
    assert [(t.label, t.usage, t.requests) for t in loaded.ledger.turns] == [
        (t.label, t.usage, t.requests) for t in session.ledger.turns]


def test_unknown_prices_leave_the_cost_out(workspace: Path, monkeypatch: pytest.MonkeyPatch, openai_server) -> None:
    rig = provider_rig(openai_server, workspace, monkeypatch, api_type="openai", model="fake-model",
                       key="test-key-openai")
    two_turns(rig)
    report = rig.agent.usage_report()
    assert "cost" not in report.splitlines()[0] and "Cost: unknown (no prices for fake-model" in report
    assert "$" not in status_total(rig.agent.session.usage, rig.agent.caps.prices)


def test_oneshot_json_reports_the_turn_and_the_session(workspace: Path, anthropic_server) -> None:
    """`-p --output-format json`: `usage` is this turn (as /tokens counts it), `total_usage` the session, which
    after --continue holds the earlier turn too; each with its requests and cost."""
    from tests.integration.test_cli import laca

    anthropic_server._queue.clear()
    anthropic_server.reset()
    (workspace.parent / "p.yaml").write_text(
        f"llm_provider: c\nllm_settings:\n  c:\n    type: anthropic\n    base_url: {anthropic_server.base_url}\n"
        "    model: claude-sonnet-5-5\n    api_key_env_var: LACA_TEST_KEY\n")
    env = {"LACA_TEST_KEY": "test-key-anthropic"}
    read = ToolCallSpec("readFile", {"path": "notes.txt", "icerc_full_text": icerc("read notes.txt")})
    (workspace / "notes.txt").write_text("a line\n")
    anthropic_server.enqueue(Reply(tool_calls=[read]), Reply(text="Read."), Reply(text="Again."))
    args = ("--config", str(workspace.parent / "p.yaml"), "--output-format", "json")
    first = json.loads(laca(*args, "-p", "read notes.txt", cwd=workspace, env=env).stdout)
    second = json.loads(laca(*args, "--continue", "-p", "and again", cwd=workspace, env=env).stdout)
    assert (first["usage"]["requests"], first["total_usage"]["requests"]) == (2, 2)
    assert (second["usage"]["requests"], second["total_usage"]["requests"]) == (1, 3)
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        assert second["total_usage"][key] == first["usage"][key] + second["usage"][key]
    assert second["total_usage"]["cost_usd"] == second["total_cost_usd"] > second["usage"]["cost_usd"] > 0
