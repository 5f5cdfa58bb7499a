from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from framework_core.policy.kinds import GrantOption
from framework_core.errors import ConfigError
from framework_core.policy.kinds import PolicyError
from framework_core.policy.check_cli import run_policy_check
from framework_core.policy.decide import CallFacts, PolicyState, decide
from framework_core.policy.grants import SessionGrants, grant_options_for
from framework_core.policy.levels import Level
from framework_core.config.rule_files import load_rule_file


def bash(cmd: str) -> CallFacts:
    return CallFacts("executeBashCommand", "bash", command=cmd)


# ---- grants ---------------------------------------------------------------------------------------

def test_grant_options_never_wider_than_request() -> None:
    opts = grant_options_for(bash("git push origin main"), None)
    assert opts[0].kind == "exact_command" and opts[0].value == "git push origin main"
    prefixes = [o.value for o in opts if o.kind == "command_prefix"]
    assert prefixes == ["git push origin", "git push"]
    assert "git" not in prefixes  # never a bare program name
    assert all(o.kind == "exact_command" for o in grant_options_for(bash("curl x | jq ."), None))


def test_prefix_grant_does_not_cover_compound_or_dangerous() -> None:
    state = PolicyState()
    state.grants.add(GrantOption("command_prefix", "npm run", "executeBashCommand", "npm run …"))
    assert decide(bash("npm run build"), state).action == "allow"
    assert decide(bash("npm run build && rm -rf x"), state).action == "ask"
    assert decide(bash("npm run x; curl x | sh"), state).action == "deny"


def test_bare_program_prefix_grant_is_refused() -> None:
    with pytest.raises(PolicyError):
        SessionGrants().add(GrantOption("command_prefix", "curl", "executeBashCommand", "curl …"))


def test_exact_grant_and_revoke() -> None:
    state = PolicyState()
    n = state.grants.add(grant_options_for(bash("curl https://a.example"), None)[0])
    assert decide(bash("curl https://a.example"), state).action == "allow"
    assert decide(bash("curl https://b.example"), state).action == "ask"  # the curl hole stays closed
    state.grants.revoke(n)
    assert decide(bash("curl https://a.example"), state).action == "ask"
    with pytest.raises(PolicyError, match="no session grant"):
        state.grants.revoke(n)


# ---- decisions ----------------------------------------------------------------------------------------

def test_decide_levels_and_allow_dangerous() -> None:
    state = PolicyState()
    assert decide(bash("ls -la"), state).action == "allow"
    d = decide(bash("rm -rf ~"), state)
    assert d.action == "deny" and d.level == Level.DANGEROUS and "home directory" in d.reasons[0]
    state.allow_dangerous = True
    d = decide(bash("rm -rf ~"), state)
    assert d.action == "ask" and d.grant_options == ()


def test_decide_file_tools() -> None:
    state = PolicyState()
    read = CallFacts("readFile", "read", path="/ws/a.py")
    assert decide(read, state).action == "allow"
    outside = CallFacts("readFile", "read", path="/etc/hosts", inside_workspace=False)
    d = decide(outside, state)
    assert d.action == "ask" and "outside the workspace" in " ".join(d.reasons)
    state.grants.add(d.grant_options[0])  # exactly this file, for the session
    assert decide(outside, state).action == "allow"
    assert decide(CallFacts("readFile", "read", path="/etc/passwd", inside_workspace=False), state).action == "ask"
    cred = decide(CallFacts("readFile", "read", path="/h/.ssh/id_rsa", home="/h", inside_workspace=False), state)
    assert cred.action == "ask" and cred.grant_options == ()  # credentials ask every time: no [a]
    assert decide(CallFacts("readFile", "read", path="/ws/.env"), state).action == "ask"


def test_a_control_path_write_asks_every_time() -> None:
    state = PolicyState()
    facts = CallFacts("writeFile", "write", path="/ws/.mcp.json", control="the next session starts these servers")
    d = decide(facts, state)
    assert d.action == "ask" and d.grant_options == ()
    assert d.reasons[0].startswith("changes a control path: the next session starts")
    state.grants.add(decide(CallFacts("writeFile", "write", path="/ws/.mcp.json"), state).grant_options[0])
    assert decide(facts, state).action == "ask"  # even a grant for that very file does not cover it
    write = CallFacts("writeFile", "write", path="/ws/a.py")
    d = decide(write, state)
    assert d.action == "ask" and d.grant_options[0].kind == "path"
    state.grants.add(d.grant_options[0])
    assert decide(write, state).action == "allow"
    assert decide(CallFacts("writeFile", "write", path="/ws/b.py"), state).action == "ask"


@pytest.mark.parametrize(("tool_perm", "action"),
                         [("always", "allow"), ("ask", "ask"), ("never", "deny"), (None, "ask")])
def test_generic_tool_permissions(tool_perm: str | None, action: str) -> None:
    facts = CallFacts("mcp__time__now", "generic", source="mcp:time", permission=tool_perm)  # type: ignore[arg-type]
    assert decide(facts, PolicyState()).action == action


def test_session_grant_for_one_tool_does_not_change_another() -> None:
    state = PolicyState()
    a = CallFacts("mcp__git__git_status", "generic", source="mcp:git", permission="ask")
    b = CallFacts("mcp__git__git_commit", "generic", source="mcp:git", permission="ask")
    state.grants.add(decide(a, state).grant_options[0])
    assert decide(a, state).action == "allow"
    assert decide(b, state).action == "ask"


# ---- rule files ------------------------------------------------------------------------------------------

def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_rules_allow_and_deny_beats_allow(tmp_path: Path) -> None:
    rules = load_rule_file(write(tmp_path, "r.yaml", """
rules:
  - {name: tests, action: allow, prefix: [pytest], examples_match: ["pytest -q"],
     examples_no_match: ["pytest -q; rm x"]}
  - {name: no-push, action: deny, prefix: [git, push]}
  - {name: push-ok, action: allow, prefix: [git, push]}
  - {name: no-fetch-tool, action: deny, tool: "mcp__web__*"}
"""))
    state = PolicyState(rules=rules)
    d = decide(bash("pytest -q tests/"), state)
    assert d.action == "allow" and "tests" in d.matched[0]
    assert decide(bash("pytest -q && rm -rf build"), state).action == "ask"
    assert decide(bash("git push origin main"), state).action == "deny"
    assert decide(bash("ls && git push"), state).action == "deny"
    assert decide(CallFacts("mcp__web__fetch", "generic", permission="always"), state).action == "deny"
    assert decide(bash("rm -rf /"), PolicyState(rules=load_rule_file(write(tmp_path, "a.yaml",
                  "rules:\n  - {action: allow, prefix: [rm]}\n")))).action == "deny"  # rules never lift the gate


def test_rule_file_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="exactly one of"):
        load_rule_file(write(tmp_path, "a.yaml", "rules:\n  - {name: x, action: allow}\n"))
    with pytest.raises(ConfigError, match="should match"):
        load_rule_file(write(tmp_path, "b.yaml",
                             "rules:\n  - {name: y, action: allow, prefix: [ls], examples_match: [pwd]}\n"))
    with pytest.raises(ConfigError, match="action"):
        load_rule_file(write(tmp_path, "c.yaml", "rules:\n  - {name: z, action: maybe, prefix: [ls]}\n"))
    with pytest.raises(ConfigError, match="line"):
        load_rule_file(write(tmp_path, "d.yaml", "rules: [\n"))


def test_plain_allowlist_file(tmp_path: Path) -> None:
    rules = load_rule_file(write(tmp_path, "allow.txt", "# comment\nmake test\nnpm run lint\n"))
    state = PolicyState(rules=rules)
    assert decide(bash("make test"), state).action == "allow"
    assert decide(bash("make install"), state).action == "ask"


# ---- policy check ------------------------------------------------------------------------------------------

def test_policy_check_plain_and_jsonl() -> None:
    out = io.StringIO()
    assert run_policy_check(["ls", "rm -rf ~"], False, io.StringIO(), out) == 0
    text = out.getvalue()
    assert "SAFE" in text and "DANGEROUS" in text and "home directory" in text
    stdin = io.StringIO('{"cmd": "git status"}\nnot json\n{"cmd": "sudo ls"}\n')
    out = io.StringIO()
    run_policy_check([], True, stdin, out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("level") for line in lines] == ["safe", None, "dangerous"]
    assert "error" in lines[1] and lines[2]["reasons"]


def test_reasons_show_words_as_written_not_requoted() -> None:
    from framework_core.policy.classifier import classify_command

    reasons = " ".join(classify_command("for i in 1 2; do echo x > out$i.txt; done").reasons)
    assert "out$i.txt" in reasons and "'out$i.txt'" not in reasons
    assert "'my file.txt'" in " ".join(classify_command('echo hi > "my file.txt"').reasons)  # spaces still quoted
