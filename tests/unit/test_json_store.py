"""JsonStore (config/json_store.py): bounded parsing, shapes checked, damaged files moved aside and said, one
writer at a time. Every file here is a decoy in the test's own temporary folder."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from framework_core.config.json_store import DamagedFile, JsonStore, loads_bounded, take_reports
from framework_core.config.trust import Addition, TrustStore
from framework_core.core.session import load_transcript


def counter_store(path: Path) -> JsonStore:
    def check(data: object) -> dict:
        if not isinstance(data, dict) or not isinstance(data.get("seen"), list):
            raise ValueError('no "seen" list')
        return data

    return JsonStore(path, what="test store", check=check, empty=lambda: {"seen": []},
                     lost=lambda loose: f"{len(loose['seen']) if isinstance(loose, dict) else 'all'} entries")


def test_deep_nesting_is_a_damaged_file_not_a_recursion_error() -> None:
    with pytest.raises(DamagedFile, match="nested deeper"):
        loads_bounded("[" * 200_000 + "]" * 200_000)
    with pytest.raises(DamagedFile, match="nested deeper than 4"):
        loads_bounded('{"a": [[[[1]]]]}', max_depth=4)
    assert loads_bounded('{"a": [[1]]}', max_depth=3) == {"a": [[1]]}


@pytest.mark.parametrize("content", ["{not json", '{"seen": 3}', "[" * 50_000, b"\xff\xfe\x00"])
def test_a_damaged_file_is_moved_aside_said_and_reads_empty(tmp_path: Path, content: str | bytes) -> None:
    take_reports()
    path = tmp_path / "store.json"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    store = counter_store(path)
    assert store.read() == {"seen": []}
    moved = list(tmp_path.glob("store.json.damaged-*"))
    assert len(moved) == 1 and not path.exists()
    reports = take_reports()
    assert len(reports) == 1 and str(path) in reports[0] and str(moved[0]) in reports[0] and "Lost:" in reports[0]
    assert store.problems == reports and take_reports() == []


def test_update_keeps_what_the_file_held(tmp_path: Path) -> None:
    store = counter_store(tmp_path / "s.json")
    with store.update() as data:
        data["seen"].append(1)
    with store.update() as data:
        data["seen"].append(2)
    assert json.loads((tmp_path / "s.json").read_text()) == {"seen": [1, 2]}
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_an_update_that_fails_leaves_the_old_file(tmp_path: Path) -> None:
    store = counter_store(tmp_path / "s.json")
    store.write({"seen": [1]})
    with pytest.raises(RuntimeError):
        with store.update() as data:
            data["seen"].append(2)
            raise RuntimeError("stop")
    assert store.read() == {"seen": [1]}


def _add_many(path: str, start: int) -> None:
    store = counter_store(Path(path))
    for n in range(start, start + 50):
        with store.update() as data:
            data["seen"].append(n)


def test_writers_in_several_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_add_many, args=(str(path), n * 1000)) for n in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * 4
    assert len(counter_store(path).read()["seen"]) == 200


def test_the_trust_store_keeps_other_workspaces_and_extra_item_keys(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    path.write_text(json.dumps({"workspaces": {"/other": {"items": {"mcp:x": {
        "digest": "d", "summary": "s", "kind": "MCP server", "tools": {"a": "1"}}}}}}))
    store = TrustStore(path)
    ws = tmp_path / "ws"
    ws.mkdir()
    store.record(ws, [Addition("rule:r", "rule", "allow r", "abc")])
    data = json.loads(path.read_text())["workspaces"]
    assert data["/other"]["items"]["mcp:x"]["tools"] == {"a": "1"}
    assert store.recorded(ws)["rule:r"]["digest"] == "abc" and store.problems == []


@pytest.mark.parametrize("content", ['{"workspaces": {"/w": {"items": {"k": {"digest": 1}}}}}',
                                     '{"workspaces": {"/w": "x"}}', '{"workspaces": []}', "[]"])
def test_a_wrong_shaped_trust_store_is_moved_aside_and_trust_goes_on(tmp_path: Path, content: str) -> None:
    path = tmp_path / "trust.json"
    path.write_text(content)
    store = TrustStore(path)
    ws = tmp_path / "ws"
    ws.mkdir()
    store.record(ws, [Addition("rule:r", "rule", "allow r", "abc")])
    assert store.recorded(ws)["rule:r"]["digest"] == "abc"
    assert len(store.problems) == 1 and "trust.json" in store.problems[0]
    assert [p.read_text() for p in tmp_path.glob("trust.json.damaged-*")] == [content]
    take_reports()


def test_a_deeply_nested_transcript_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = json.dumps({"type": "message", "message": {"role": "user", "content": "hello"}})
    path.write_text(good + "\n" + "[" * 100_000 + "\n")
    loaded = load_transcript(path)
    assert [m.content for m in loaded.messages] == ["hello"]
    assert any("line 2" in w for w in loaded.warnings)
    from framework_core.ui.sessions_view import last_user_message

    deep = '{"type": "message", "message": {"role": "user", "content": ' + "[" * 100_000
    path.write_text(good + "\n" + deep + "\n")
    assert last_user_message(path) == "hello"


def test_a_damaged_sign_in_file_is_moved_aside_and_signing_in_starts_again(tmp_path: Path) -> None:
    from framework_core.tools.mcp_oauth_store import TokenFile, token_path

    path = token_path(tmp_path / "mcp-oauth", "srv", "https://x.example/mcp")
    path.parent.mkdir()
    path.write_text('{"server": "srv", "url": "https://x.example/mcp", "tokens": "oops"}')
    store = TokenFile(path, "srv", "https://x.example/mcp")
    assert store.problem and str(path) in store.problem and "signs in to the server again" in store.problem
    assert "tokens" not in store.data and len(list(path.parent.glob("*.damaged-*"))) == 1
    store.data["callback_port"] = 4242
    store.save(("client_info",))
    assert json.loads(path.read_text())["callback_port"] == 4242
    assert [p.name for p in path.parent.iterdir() if p.suffix == ".lock"] == []  # the lock is beside the folder
    take_reports()
