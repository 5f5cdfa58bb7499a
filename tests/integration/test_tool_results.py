"""What the model reads of a tool result, on every wire API, against the fake servers: plain text (a header
line, then the output as printed), held to one output budget with the cut marked in place, and the cut part
read back by range with readFile, without a prompt, while the history stays valid for the API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from framework_core.core.history import is_valid
from framework_core.sandbox.probe import probe
from framework_core.tools.result_budget import DEFAULT_BUDGET
from tests.fakes.script import Reply, ToolCallSpec, icerc
from tests.integration.conftest import Rig, make_rig
from tests.integration.provider_rig import provider_rig

HEADER = 120  # the header line and labels a result adds to its output
WIRES = ["openai", "openai-responses", "anthropic"]


@pytest.fixture(params=WIRES)
def any_wire(request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    if request.param == "openai-responses":
        server = request.getfixturevalue("openai_server")
        return provider_rig(server, workspace, monkeypatch, api_type="openai-responses", model="fake-model",
                            key="test-key-openai")
    return make_rig(request.param, request, workspace, monkeypatch)


def bash(cmd: str, cid: str) -> ToolCallSpec:
    return ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": icerc(cmd)}, id=cid)


def tool(name: str, cid: str, **args) -> ToolCallSpec:
    return ToolCallSpec(name, {**args, "icerc_full_text": icerc(f"{name} {args}")}, id=cid)


def sent_results(rig: Rig) -> dict[str, str]:
    """The tool results of the last request, by call id, as the provider received them."""
    if rig.server.wire == "anthropic":
        out = {}
        for m in rig.server.requests[-1]["messages"]:
            for block in m["content"] if isinstance(m["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    out[block["tool_use_id"]] = content if isinstance(content, str) else "".join(
                        part.get("text", "") for part in content)
        return out
    return {m["tool_call_id"]: m["content"] for m in rig.server.sent_messages() if m["role"] == "tool"}


def run(rig: Rig, *calls: ToolCallSpec, prompt: str = "go") -> dict[str, str]:
    rig.server.enqueue(Reply(tool_calls=list(calls)), Reply(text="done"))
    assert rig.agent.run_turn(prompt).text == "done"  # the API accepted the history with the results
    assert is_valid(rig.agent.session.messages)
    return sent_results(rig)


def read_hint(text: str) -> dict:
    return json.loads(re.search(r"Read them with readFile (\{.*?\})", text).group(1))


# ---- plain text -------------------------------------------------------------------------------------

def test_a_command_result_is_its_output_under_one_header_line(any_wire: Rig) -> None:
    out = run(any_wire, bash("printf 'alpha\\nbeta\\n'", "c1"))["c1"]
    assert re.fullmatch(r"ok · exit 0 · \d+\.\d\d s\nalpha\nbeta", out), out


def test_stdout_and_stderr_are_labelled_only_when_both_are_there(any_wire: Rig) -> None:
    out = run(any_wire, bash("echo out; echo err >&2; exit 3", "c1"), bash("echo only-err >&2", "c2"))
    header, output = out["c1"].split("\n", 1)
    assert "exit 3" in header and output == "stdout:\nout\nstderr:\nerr"
    assert re.fullmatch(r"ok · exit 0 · \d+\.\d\d s\nonly-err", out["c2"]), out["c2"]


def test_no_result_is_json(any_wire: Rig) -> None:
    (any_wire.workspace / "a.txt").write_text("one\ntwo\n")
    out = run(any_wire, bash("true", "c1"), tool("readFile", "c2", path="a.txt"), tool("readFile", "c3", path="nope"))
    assert out["c1"].endswith("\n(no output)") and out["c2"].endswith("\none\ntwo")
    assert not any(text.lstrip().startswith("{") or "\\n" in text for text in out.values())


def test_file_tools_say_what_they_did_in_plain_words(rig: Rig) -> None:
    (rig.workspace / "a.txt").write_text("one\ntwo\n")
    rig.approver.push("y")
    out = run(rig, tool("writeFile", "w1", path="notes.txt", content="hello\n"), tool("readFile", "r1", path="a.txt"),
              tool("readFile", "r2", path="missing.txt"))
    assert out["w1"] == "ok\nWrote 6 bytes to notes.txt."
    assert out["r1"] == "ok · lines 1-2 of 2\none\ntwo"
    assert out["r2"] == f"Error: file not found: {rig.workspace.resolve() / 'missing.txt'}"


def test_refusals_and_blocks_read_as_sentences(rig: Rig) -> None:
    rig.approver.push("n")
    out = run(rig, bash("touch made.txt", "c1"), bash("rm -rf ~", "c2"))
    assert out["c1"] == "User declined execution."
    assert out["c2"].startswith("Blocked by policy: ") and "home" in out["c2"]


def test_the_sandbox_and_changes_notes_stay_with_the_result(rig: Rig) -> None:
    sandbox = probe()
    if not (sandbox.available and sandbox.overlay):
        pytest.skip("no sandbox with an overlay of the workspace here: a command's changes are not listed")
    rig.approver.push("y")
    out = run(rig, bash("echo hi > made.txt", "c1"))["c1"]
    header = out.splitlines()[0]
    assert header.startswith("ok · exit 0 · ") and "1 file created" in header


# ---- one budget, the cut marked, the middle read by range -------------------------------------------

def test_a_long_output_keeps_head_and_tail_within_the_budget(any_wire: Rig) -> None:
    out = run(any_wire, bash("seq 1 100000", "c1"))["c1"]
    lines = out.splitlines()
    assert len(out) <= DEFAULT_BUDGET + HEADER
    assert lines[0].startswith("ok · exit 0 · ")
    assert "stdout cut: " in lines[0] and "of 100,000 lines left out" in lines[0]
    assert lines[1:4] == ["1", "2", "3"] and lines[-1] == "100000"
    assert re.search(r"\[… [\d,]+ lines \([\d,]+ bytes\) left out: lines [\d,]+-[\d,]+ of 100,000\. Read them", out)


def test_the_cut_part_is_read_by_range_without_a_prompt(any_wire: Rig) -> None:
    hint = read_hint(run(any_wire, bash("seq 1 100000", "c1"))["c1"])
    assert 1 < hint["offset"] < 50_000 < hint["offset"] + hint["limit"] < 100_000
    out = run(any_wire, tool("readFile", "r1", path=hint["path"], offset=50_000, limit=3), prompt="read the middle")
    assert out["r1"] == "ok · lines 50,000-50,002 of 100,000\n50000\n50001\n50002"
    assert any_wire.approver.seen == []  # a saved output of this session is read without asking


def test_a_2_mb_file_sends_at_most_the_budget_and_says_how_to_read_more(rig: Rig) -> None:
    (rig.workspace / "big.log").write_text("".join(f"entry {i:06d} " + "z" * 50 + "\n" for i in range(1, 33_001)))
    assert (rig.workspace / "big.log").stat().st_size > 2_000_000
    out = run(rig, tool("readFile", "r1", path="big.log"))["r1"]
    assert len(out) <= DEFAULT_BUDGET + HEADER
    assert out.startswith("ok · lines 1-33,000 of 33,000 · cut: ") and "entry 000001 " in out and "entry 033000 " in out
    hint = read_hint(out)
    assert hint["path"] == "big.log"
    more = run(rig, tool("readFile", "r2", path="big.log", offset=20_000, limit=2), prompt="more")["r2"]
    assert more == "ok · lines 20,000-20,001 of 33,000\n" + "".join(
        f"entry {i:06d} " + "z" * 50 + "\n" for i in (20_000, 20_001)).rstrip("\n")


def test_a_range_past_the_end_is_an_error_the_model_can_read(rig: Rig) -> None:
    (rig.workspace / "short.txt").write_text("a\nb\n")
    out = run(rig, tool("readFile", "r1", path="short.txt", offset=9))["r1"]
    assert out == "Error: Invalid arguments: offset 9 is past the end of the file (2 lines)"


def test_a_small_window_gets_a_smaller_budget(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                              openai_server) -> None:
    rig = provider_rig(openai_server, workspace, monkeypatch, api_type="openai", model="fake-model",
                       extra="    context_window: 8192\n    max_tokens: 512\n", key="test-key-openai")
    out = run(rig, bash("seq 1 100000", "c1"))["c1"]
    assert len(out) <= 3_276 + HEADER and out.splitlines()[-1] == "100000"


# ---- nothing else outside the workspace is read without asking ---------------------------------------

def test_only_the_saved_outputs_are_read_outside_the_workspace_without_asking(rig: Rig) -> None:
    saved = Path(read_hint(run(rig, bash("seq 1 100000", "c1"))["c1"])["path"])
    transcript = rig.agent.session.transcript.path
    rig.approver.push("n", "n")
    out = run(rig, tool("readFile", "r1", path=str(transcript)), tool("readFile", "r2", path=str(saved.parent / "..")),
              prompt="peek")
    assert [r.request.request_id for r in rig.approver.seen] == ["r1", "r2"]
    assert out["r1"] == out["r2"] == "User declined execution."


def test_a_saved_output_gone_with_its_session_says_so(rig: Rig) -> None:
    saved = Path(read_hint(run(rig, bash("seq 1 100000", "c1"))["c1"])["path"])
    saved.unlink()
    out = run(rig, tool("readFile", "r1", path=str(saved)), prompt="again")["r1"]
    assert out.startswith("Error: file not found: ") and "kept only while their session runs" in out
    assert rig.approver.seen == []


# ---- MCP content: the same budget, the same paging ----------------------------------------------------

def test_a_3_mb_mcp_result_sends_at_most_the_budget_and_is_paged_like_any_output(workspace: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                                    anthropic_server) -> None:
    from tests.integration.test_mcp_agent import agent_for, call

    agent, _ = agent_for("anthropic", anthropic_server, workspace, monkeypatch)
    try:
        rig = Rig(agent, agent.teps.approver, [], anthropic_server, workspace)
        anthropic_server.enqueue(call("big_text", lines=45_000), Reply(text="done"))
        assert agent.run_turn("get the rows").text == "done"
        out = next(iter(sent_results(rig).values()))
        assert len(out) <= DEFAULT_BUDGET + HEADER and out.startswith("ok · cut: ")
        assert "row 000000 " in out and "row 044999 " in out
        hint = read_hint(out)
        assert Path(hint["path"]).stat().st_size > 3_000_000  # the whole result, kept for the session
        got = run(rig, tool("readFile", "r1", path=hint["path"], offset=30_001, limit=1), prompt="row 30000")["r1"]
        assert got == "ok · lines 30,001-30,001 of 45,000\nrow 030000 " + "y" * 60
    finally:
        agent.mcp.close()
