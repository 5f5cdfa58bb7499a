"""Every call that runs without a question names what allowed it, on screen: the rule and its file, the session
grant, the mode or the policy's Safe reading. The reasons come from the real policy and fate (core/fate.py)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from framework_core.core.events import ToolCallStarted
from framework_core.core.fate import CallFeatures, SandboxFacts, decide_fate
from framework_core.lial_core import ToolRequest
from framework_core.policy.decide import CallFacts, PolicyState, decide
from framework_core.policy.kinds import GrantOption
from framework_core.policy.rules import rules_from_data
from framework_core.ui.render import EventRenderer


def shown(facts: CallFacts, state: PolicyState, mode: str = "ask", width: int = 120) -> str:
    """The line the renderer prints for this call when its fate is to run without asking."""
    fate = decide_fate(decide(facts, state), CallFeatures(facts.kind, runs_process=facts.kind == "bash"),
                       SandboxFacts(), mode)
    assert fate.verb == "run" and not fate.asked
    buf = io.StringIO()
    request = ToolRequest("r1", facts.tool_name, {"command": facts.command or ""})
    EventRenderer(Console(file=buf, width=width, color_system=None))(
        ToolCallStarted(request, "Run command" if facts.kind == "bash" else "Write file", facts.command or "a.txt",
                        True, fate.reason))
    return buf.getvalue()


def bash(command: str) -> CallFacts:
    return CallFacts("executeBashCommand", "bash", command=command)


def test_a_rule_is_named_with_its_file_under_the_home_as_tilde() -> None:
    source = str(Path(os.path.expanduser("~")) / ".config" / "laca" / "rules.yaml")
    rules = rules_from_data({"rules": [{"name": "pytest", "action": "allow", "prefix": ["pytest"]}]}, source)
    assert "(allowed by rule `pytest` (~/.config/laca/rules.yaml))" in shown(bash("pytest -q"), PolicyState(rules))


def test_safe_a_grant_and_a_mode_each_say_so() -> None:
    assert "(allowed: Safe (reads only))" in shown(bash("ls -la"), PolicyState())
    state = PolicyState()
    state.grants.add(GrantOption("exact_command", "touch x", "executeBashCommand", "exactly this command: touch x"))
    assert "(allowed by session grant #1: exactly this command: touch x)" in shown(bash("touch x"), state)
    write = CallFacts("writeFile", "write", path="/ws/a.txt")
    assert "(allowed by accept-edits mode (a file edit inside the workspace))" in shown(write, PolicyState(),
                                                                                         "accept-edits")
    assert "(allowed by auto mode · sandboxed)" in shown(bash("touch x"), PolicyState(), "auto")


@pytest.mark.parametrize("width", [60, 120])
def test_the_reason_is_never_cut_off_on_a_narrow_terminal(width: int) -> None:
    state = PolicyState()
    command = "touch a-long-file-name.txt"
    state.grants.add(GrantOption("exact_command", command, "executeBashCommand", f"exactly this command: {command}"))
    out = shown(bash(command), state, width=width)
    assert f"(allowed by session grant #1: exactly this command: {command})" in " ".join(out.split())
    assert "…" not in out
