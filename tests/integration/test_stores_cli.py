"""The stores and the audit log as a user meets them through `laca`: eight trusting starts at once, damaged trust
files, and `laca audit verify` / `laca audit replay` on a session's log. Every store is a decoy in this test's
own data folder (conftest's isolated XDG folders)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.script import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parents[2]
RULE = "rules:\n  - name: allow-touch\n    action: allow\n    prefix: [touch]\n"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def command(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args]


def environ(server: FakeOpenAIServer) -> dict[str, str]:
    full = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    return {**full, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}


def laca(*args: str, cwd: Path, server: FakeOpenAIServer) -> subprocess.CompletedProcess:
    return subprocess.run(command(*args), cwd=cwd, env=environ(server), capture_output=True, text=True, timeout=90)


def trust_file() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "laca" / "trust.json"


def workspace_with_rule(path: Path) -> Path:
    (path / ".laca").mkdir(parents=True)
    (path / ".laca" / "rules.yaml").write_text(RULE)
    return path


def test_eight_trusting_starts_at_once_keep_all_eight(tmp_path: Path, server: FakeOpenAIServer) -> None:
    spaces = [workspace_with_rule(tmp_path / f"ws{n}") for n in range(8)]
    procs = [subprocess.Popen(command("-p", "hi", "--trust"), cwd=ws, env=environ(server), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for ws in spaces]
    outcomes = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outcomes]
    recorded = json.loads(trust_file().read_text())["workspaces"]
    assert sorted(recorded) == sorted(str(ws.resolve()) for ws in spaces)
    assert all("rule:allow-touch" in entry["items"] for entry in recorded.values())


@pytest.mark.parametrize("content, why", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    ('{"workspaces": {"/elsewhere": {"items": []}}}', "not the shape"),
    ('{"workspaces": {"/elsewhere": ["x"]}}', "not the shape"),
    ("\x00\x01 not json at all {", "not valid JSON"),
])
def test_a_damaged_trust_file_is_moved_aside_and_said(content: str, why: str, tmp_path: Path,
                                                      server: FakeOpenAIServer) -> None:
    ws = workspace_with_rule(tmp_path / "ws")
    trust_file().parent.mkdir(parents=True, exist_ok=True)
    trust_file().write_text(content)
    r = laca("-p", "hi", "--trust", cwd=ws, server=server)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert str(trust_file()) in r.stderr and why in r.stderr and "Lost:" in r.stderr
    quarantined = list(trust_file().parent.glob("trust.json.damaged-*"))
    assert len(quarantined) == 1 and quarantined[0].read_text() == content
    assert str(ws.resolve()) in json.loads(trust_file().read_text())["workspaces"]  # the new trust is kept


def test_a_damaged_trust_file_names_what_is_lost(tmp_path: Path, server: FakeOpenAIServer) -> None:
    ws = workspace_with_rule(tmp_path / "ws")
    trust_file().parent.mkdir(parents=True, exist_ok=True)
    trust_file().write_text('{"workspaces": {"/srv/app": {"items": {"rule:x": {"digest": 7}}}}}')
    r = laca("-p", "hi", cwd=ws, server=server)
    assert r.returncode == 0 and "/srv/app" in r.stderr and "1 workspace" in r.stderr


def audit_log(ws: Path) -> Path:
    logs = list((Path(os.environ["XDG_DATA_HOME"]) / "laca" / "audit").glob("*.jsonl"))
    assert len(logs) == 1
    assert str(ws.resolve()) in logs[0].read_text()
    return logs[0]


def bash(cmd: str) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": "brief"})


def test_audit_verify_passes_then_names_the_changed_line(workspace: Path, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(tool_calls=[bash("ls")]), Reply(tool_calls=[bash("pwd")]),
                   Reply(tool_calls=[bash("rm -rf ~")]), Reply(text="done"))
    assert laca("-p", "look around", cwd=workspace, server=server).returncode == 0
    log = audit_log(workspace)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["call"]["arguments"]["command"] for r in records] == ["ls", "pwd", "rm -rf ~"]
    assert records[0]["verdict"]["action"] == "allow" and records[0]["result"]["status"] == "success"
    assert records[2]["verdict"]["level"] == "dangerous" and records[2]["result"]["status"] == "blocked_by_policy"
    ok = laca("audit", "verify", cwd=workspace, server=server)
    assert ok.returncode == 0 and "3 records, intact" in ok.stdout
    data = bytearray(log.read_bytes())
    at = data.index(b'"command":"pwd"') + len(b'"command":"')
    data[at] = ord("P")  # one byte of the second record
    log.write_bytes(bytes(data))
    bad = laca("audit", "verify", "--workspace", str(workspace), cwd=ROOT, server=server)
    assert bad.returncode == 1 and "line 2:" in bad.stdout and "Traceback" not in bad.stderr


def test_audit_replay_lists_a_command_a_changed_rule_file_decides_differently(
        workspace: Path, server: FakeOpenAIServer) -> None:
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "laca" / "rules.yaml"
    rules.write_text(RULE)
    server.enqueue(Reply(tool_calls=[bash("touch made.txt")]), Reply(tool_calls=[bash("ls")]), Reply(text="ok"))
    assert laca("-p", "make a file", cwd=workspace, server=server).returncode == 0
    same = laca("audit", "replay", cwd=workspace, server=server)
    assert same.returncode == 0 and "2 recorded command(s)" in same.stdout and "decided as it was" in same.stdout
    rules.write_text("rules: []\n")
    r = laca("audit", "replay", "--since", "2000-01-01", cwd=workspace, server=server)
    assert r.returncode == 0, r.stderr
    assert "1 of 2 recorded command(s)" in r.stdout and "touch made.txt" in r.stdout
    assert "was: allow (needs_confirm) by" in r.stdout and "allow-touch" in r.stdout and "now: ask" in r.stdout
    later = laca("audit", "replay", "--since", "2999-01-01", cwd=workspace, server=server)
    assert "0 recorded command(s)" in later.stdout


def test_audit_without_a_log_says_so(tmp_path: Path, server: FakeOpenAIServer) -> None:
    r = laca("audit", "verify", cwd=tmp_path, server=server)
    assert r.returncode == 1 and "No audit log" in r.stdout and str(tmp_path) in r.stdout
    bad = laca("audit", "replay", "--since", "yesterday", cwd=tmp_path, server=server)
    assert bad.returncode == 2 and "YYYY-MM-DD" in bad.stderr and "Traceback" not in bad.stderr


def test_audit_verify_catches_a_log_cut_short_or_deleted_by_the_head_the_session_kept(
        workspace: Path, server: FakeOpenAIServer) -> None:
    server.enqueue(Reply(tool_calls=[bash("ls")]), Reply(tool_calls=[bash("pwd")]), Reply(text="done"))
    assert laca("-p", "look around", cwd=workspace, server=server).returncode == 0
    log = audit_log(workspace)
    ok = laca("audit", "verify", cwd=workspace, server=server)
    assert ok.returncode == 0 and "1 head(s) recorded in session journals" in ok.stdout
    assert "Not caught: someone who has LACA's data folder" in ok.stdout
    log.write_bytes(log.read_bytes().splitlines(keepends=True)[0])  # the last record removed, cleanly
    cut = laca("audit", "verify", cwd=workspace, server=server)
    assert cut.returncode == 1 and "removed from its end" in cut.stdout
    log.unlink()
    gone = laca("audit", "verify", cwd=workspace, server=server)
    assert gone.returncode == 1 and "MISSING" in gone.stdout and "deleted" in gone.stdout


@pytest.mark.parametrize("make, why", [
    (lambda p: p.mkdir(), "it is a folder"),
    (lambda p: (p.symlink_to(p.with_name("loop")), p.with_name("loop").symlink_to(p)), "symlink loop"),
])
def test_an_unreadable_trust_store_is_named_at_start_and_with_trust(make, why: str, tmp_path: Path,
                                                                   server: FakeOpenAIServer) -> None:
    ws = workspace_with_rule(tmp_path / "ws")
    trust_file().parent.mkdir(parents=True, exist_ok=True)
    make(trust_file())  # a decoy store in this test's own data folder
    r = laca("-p", "hi", "--trust", cwd=ws, server=server)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert str(trust_file()) in r.stderr and why in r.stderr and "not remembered" in r.stderr
    assert "Trusted for this run only" in r.stderr


def test_a_transcript_of_binary_junk_is_named_as_damaged_by_continue(tmp_path: Path, server: FakeOpenAIServer) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sessions = Path(os.environ["XDG_DATA_HOME"]) / "laca" / "sessions"
    sessions.mkdir(parents=True)
    junk = sessions / "20260101-000000-abcd.jsonl"
    junk.write_bytes(bytes(range(256)) * 8)  # a decoy transcript overwritten with junk
    r = laca("-p", "hi", "--continue", cwd=ws, server=server)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    said = " ".join(r.stderr.split())
    assert "damaged" in said and str(junk) in said
