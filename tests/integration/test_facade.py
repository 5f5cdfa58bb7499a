"""The façade: every front-end action is one call, and what it reports is what the parts hold."""

from __future__ import annotations

import json

import pytest

from framework_core.errors import LacaError
from tests.fakes.script import Reply


def test_status_is_one_frozen_record_of_what_the_parts_hold(rig) -> None:
    facade = rig.facade
    facade.set_mode("plan")
    facade.set_dry_run(True)
    status = facade.status()
    assert (status.provider, status.mode, status.dry_run, status.allow_dangerous, status.session_id) == (
        rig.agent.provider_name, "plan", True, False, rig.agent.session.session_id)
    with pytest.raises(AttributeError):
        status.mode = "ask"  # type: ignore[misc]


def test_shift_tab_cycles_the_modes_and_the_model_is_told(rig) -> None:
    seen = [rig.facade.next_mode() for _ in range(4)]
    rig.server.enqueue(Reply(text="ok"))
    rig.facade.turn("hi")
    sent = json.dumps(rig.server.requests[-1])
    assert seen == ["accept-edits", "plan", "auto", "ask"] and "switched to ask mode" in sent


def test_a_turn_and_close_record_the_session_for_continue(rig) -> None:
    rig.server.enqueue(Reply(text="hello"))
    assert rig.facade.turn("hi").text == "hello"
    closed = rig.facade.close()
    again = rig.facade.close()  # a second close (REPL exit after an error) says the same and writes nothing
    records = [json.loads(line) for line in rig.agent.session.transcript.path.read_text().splitlines()]
    metas = [r for r in records if r.get("type") == "meta" and "persona" in r and "pid" not in r]
    assert (closed, again, closed.problem) == (again, closed, None)
    assert [m["provider"] for m in metas] == [rig.agent.provider_name]


def test_a_new_session_keeps_the_tools_and_starts_the_conversation_over(rig) -> None:
    rig.server.enqueue(Reply(text="hello"))
    rig.facade.turn("hi")
    old_id, problem = rig.facade.new_session()
    assert (problem, rig.facade.session_id != old_id, rig.agent.session.messages) == (None, True, [])


def test_revoking_a_grant_that_is_not_there_names_the_valid_ones(rig) -> None:
    with pytest.raises(LacaError, match=r"no session grant #3 \(current: none\)"):
        rig.facade.revoke(3)


def test_a_tool_is_found_by_its_name(rig) -> None:
    spec = rig.facade.tool("readFile")
    assert spec is not None and spec.name == "readFile" and rig.facade.tool("nope") is None
