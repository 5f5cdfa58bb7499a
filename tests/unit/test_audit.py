"""The audit log (core/audit.py): what TEPS records for each call, the hash chain `verify` checks, and `replay`
judging recorded commands under other rules. Logs are decoys in the test's own temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

from framework_core.core.approval import ScriptedApprover
from framework_core.core.audit import GENESIS, MAX_STRING, AuditLog, read_records, replay, verify
from framework_core.policy.decide import CallFacts, PolicyState, decide
from framework_core.policy.rules import Rule, RuleSet
from framework_core.teps import TEPSEngine


def bash(cmd: str, rid: str) -> dict:
    return {"request_id": rid, "tool_name": "executeBashCommand", "parameters": {"command": cmd},
            "icerc_full_text": "Intent: test"}


def run_calls(ws: Path, log: AuditLog, answers=(), policy: PolicyState | None = None) -> TEPSEngine:
    teps = TEPSEngine({"command_timeout_s": 10}, workspace=ws, approver=ScriptedApprover(answers), audit_log=log,
                      policy=policy)
    teps.execute_tool(bash("ls", "r1"))
    teps.execute_tool(bash("touch made.txt", "r2"))
    teps.execute_tool(bash("rm -rf ~", "r3"))
    return teps


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_call_is_recorded_with_its_verdict_answer_and_result(workspace: Path, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit" / "w.jsonl", workspace, session_id="s1")
    run_calls(workspace, log, ["n"])
    ls, touch, rm = records(log.path)
    assert ls["prev"] == GENESIS and ls["session"] == "s1" and ls["workspace"] == str(workspace)
    assert ls["verdict"]["action"] == "allow" and ls["allowed_by"] == "read-only by construction"
    assert ls["result"]["status"] == "success" and ls["sandbox"]["profile"] == "workspace-write"
    assert touch["verdict"]["action"] == "ask" and touch["answer"]["choice"] == "deny"
    assert touch["result"]["status"] == "declined_by_user" and touch["allowed_by"] is None
    assert rm["verdict"]["level"] == "dangerous" and rm["result"]["status"] == "blocked_by_policy"
    assert verify(log.path).intact and verify(log.path).records == 3


def test_long_arguments_are_cut_and_secrets_masked(workspace: Path, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", workspace, mask=("sk-secret-value-123",))
    teps = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover(["n"]), audit_log=log)
    teps.execute_tool({"request_id": "w", "tool_name": "writeFile", "icerc_full_text": "b",
                       "parameters": {"path": "big.txt", "content": "x" * 50_000 + " sk-secret-value-123"}})
    (record,) = records(log.path)
    content = record["call"]["arguments"]["content"]
    assert len(content) < MAX_STRING + 100 and "50004 characters" in content  # counted after masking
    assert "sk-secret-value-123" not in log.path.read_text()


def test_verify_names_the_line_that_was_changed(workspace: Path, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", workspace)
    run_calls(workspace, log, ["n"])
    original = log.path.read_bytes()
    for n in range(3):
        lines = original.split(b"\n")
        lines[n] = lines[n].replace(b'"status":"', b'"status":"X', 1)
        log.path.write_bytes(b"\n".join(lines))
        result = verify(log.path)
        assert (result.bad_line, result.records) == (n + 1, n), result
    lines = original.split(b"\n")
    log.path.write_bytes(b"\n".join(lines[:1] + lines[2:]))  # the second record removed
    assert verify(log.path).bad_line == 2 and "removed" in verify(log.path).why
    log.path.write_bytes(original[:-5])
    assert verify(log.path).bad_line == 3 and "incomplete" in verify(log.path).why


def test_appending_after_a_cut_line_chains_on_and_verify_names_it(workspace: Path, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", workspace)
    log.append({"call": {"tool": "t"}})
    log.path.write_bytes(log.path.read_bytes() + b'{"half a rec')  # a crash while writing
    log.append({"call": {"tool": "u"}})
    assert len(log.path.read_text().splitlines()) == 3
    assert verify(log.path).bad_line == 2


def test_a_log_that_cannot_be_written_is_said_once_and_calls_go_on(workspace: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    said: list[str] = []
    log = AuditLog(blocker / "a.jsonl", workspace)  # its folder is a file
    log.on_problem = said.append
    teps = run_calls(workspace, log, ["n"])
    assert teps is not None and len(said) == 1 and "audit log" in said[0]


def test_replay_lists_commands_decided_differently_under_other_rules(workspace: Path, tmp_path: Path) -> None:
    rule = Rule("allow-touch", "allow", "rules.yaml", prefix=("touch",))
    log = AuditLog(tmp_path / "a.jsonl", workspace)
    run_calls(workspace, log, policy=PolicyState(rules=RuleSet([rule])))
    assert records(log.path)[1]["allowed_by"] == rule.label

    def judge_with(state: PolicyState):
        return lambda command, dangerous: decide(CallFacts("executeBashCommand", "bash", command=command), state)

    same, judged = replay(read_records(log.path), judge_with(PolicyState(rules=RuleSet([rule]))))
    assert (same, judged) == ([], 3)
    changed, _ = replay(read_records(log.path), judge_with(PolicyState()))
    assert [(c.line, c.command) for c in changed] == [(2, "touch made.txt")]
    assert changed[0].was.startswith("allow (needs_confirm) by") and changed[0].now.startswith("ask")
    assert read_records(log.path, since="2999-01-01") == []
