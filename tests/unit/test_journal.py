"""The transcript is a journal: one writer, every record on its own line, failures said once, nothing lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from framework_core.core.history import NOT_RUN_TEXT, UNKNOWN_OUTCOME_TEXT, is_valid
from framework_core.lial_core import Message, ToolRequest, ToolResult
from framework_core.core.session import (SessionBusy, latest_session, load_transcript, open_session, resume_session,
                                    sessions_dir)

ROOT = Path(__file__).resolve().parents[2]


def call(rid: str) -> ToolRequest:
    return ToolRequest(rid, "executeBashCommand", {"command": "touch " + rid}, "brief")


def ok(rid: str) -> ToolResult:
    return ToolResult(rid, "executeBashCommand", "success", {"stdout": "", "exit_code": 0})


def batch_cut_by_a_kill(data: Path) -> Path:
    """Three calls: a finished, b running when the process died, c never started."""
    s = open_session(data)
    s.start({"workspace": "/ws"})
    s.add_user("make three files")
    s.add(Message("assistant", "", tool_calls=[call("a"), call("b"), call("c")]))
    s.record({"type": "tool_started", "request_id": "a"})
    s.add_result(ok("a"))
    s.record({"type": "tool_started", "request_id": "b"})
    s.transcript.close()  # what a kill -9 leaves: no more records
    return s.transcript.path


def test_finished_calls_keep_their_outcome_and_only_the_running_one_is_unknown(tmp_path: Path) -> None:
    loaded = load_transcript(batch_cut_by_a_kill(tmp_path))
    results = {m.tool_call_id: m for m in loaded.messages if m.role == "tool_result"}
    assert not results["a"].is_error and "unknown" not in results["a"].content
    assert UNKNOWN_OUTCOME_TEXT in results["b"].content
    assert NOT_RUN_TEXT in results["c"].content
    assert is_valid(loaded.messages)


def test_repairs_are_written_back_once(tmp_path: Path) -> None:
    path = batch_cut_by_a_kill(tmp_path)
    session, first = resume_session(tmp_path, path)
    assert first.repairs
    session.close()
    again = load_transcript(path)
    assert again.repairs == [] and [m.content for m in again.messages] == [m.content for m in first.messages]


def test_record_after_a_cut_line_starts_on_a_new_line(tmp_path: Path) -> None:
    s = open_session(tmp_path)
    s.add_user("one")
    s.transcript.close()
    with open(s.transcript.path, "a") as fh:
        fh.write('{"type": "message", "message": {"role": "user", "conte')  # a kill mid-write
    again, loaded = resume_session(tmp_path, s.transcript.path)
    again.add_user("two")
    again.close()
    final = load_transcript(s.transcript.path)
    assert [m.content for m in final.messages] == ["one", "two"]


def test_a_line_that_is_json_but_not_an_object_is_skipped(tmp_path: Path) -> None:
    s = open_session(tmp_path)
    s.start({"workspace": "/ws"})
    s.add_user("hello")
    s.transcript.close()
    with open(s.transcript.path, "a") as fh:
        fh.write('[1, 2, 3]\n"text"\n{"type": "message", "message": {"role": "boss", "content": "x"}}\n')
    loaded = load_transcript(s.transcript.path)
    assert [m.content for m in loaded.messages] == ["hello"]
    assert len(loaded.warnings) == 3


def test_second_writer_is_refused_with_the_holders_pid_and_may_fork(tmp_path: Path) -> None:
    first = open_session(tmp_path)
    first.start({"workspace": "/ws"})
    first.add_user("hello")
    with pytest.raises(SessionBusy) as err:
        resume_session(tmp_path, first.transcript.path)
    assert str(os.getpid()) in str(err.value) and "fork" in str(err.value)
    forked, _ = resume_session(tmp_path, first.transcript.path, fork=True)
    assert forked.session_id != first.session_id and [m.content for m in forked.messages] == ["hello"]
    forked.add_user("only in the fork")
    first.add_user("only in the first")
    forked.close()
    first.close()
    assert [m.content for m in load_transcript(first.transcript.path).messages] == ["hello", "only in the first"]
    assert [m.content for m in load_transcript(forked.transcript.path).messages] == ["hello", "only in the fork"]
    reopened, _ = resume_session(tmp_path, first.transcript.path)  # the lock went with the first writer
    reopened.close()


def test_a_writer_in_another_process_is_named(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from framework_core.core.session import open_session
        s = open_session(Path({str(tmp_path)!r}), "held")
        s.add_user("x")
        print("ready", flush=True)
        sys.stdin.readline()
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(SessionBusy, match=f"LACA process {holder.pid}"):
            open_session(tmp_path, "held")
    finally:
        holder.kill()
        holder.wait()
    open_session(tmp_path, "held").close()  # a killed holder leaves no lock behind


def test_write_error_is_reported_once_and_close_does_not_claim_a_save(tmp_path: Path) -> None:
    folder = sessions_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "full.jsonl").symlink_to("/dev/full")  # every write: ENOSPC
    s = open_session(tmp_path, "full")
    said: list[str | None] = []
    s.on_write_state = said.append
    s.add_user("one")
    s.add_user("two")
    s.add_result(ok("a"))
    assert len(said) == 1 and said[0] and "No space left on device" in said[0]
    assert not s.saved and s.write_error
    why = s.close()
    assert why and "not saved" in why and "3 records" in why


def test_unwritable_data_dir_gives_a_session_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    s = open_session(blocker)
    assert s.transcript is None and s.memory_only and "kept in memory only" in s.memory_only
    s.add_user("still works")
    assert [m.content for m in s.messages] == ["still works"]
    assert s.close() == s.memory_only


def test_latest_session_reads_only_what_it_needs(tmp_path: Path) -> None:
    for ws in ("/a", "/b", "/a"):
        s = open_session(tmp_path)
        s.start({"workspace": ws})
        s.add_user(f"hi {ws}")
        s.close()
    empty = open_session(tmp_path)
    empty.start({"workspace": "/a"})  # no message: never picked
    empty.close()
    path = latest_session(tmp_path, Path("/a"))
    assert path is not None and load_transcript(path).messages[0].content == "hi /a"
    assert latest_session(tmp_path, Path("/c")) is None


UNSHARE = shutil.which("unshare")


def tmpfs_mounts_here(folder: Path) -> bool:
    """Whether a tmpfs can be mounted on `folder` in a private namespace here (it is gone after)."""
    probe = subprocess.run([str(UNSHARE), "--user", "--map-root-user", "--mount", "mount", "-t", "tmpfs", "tmpfs",
                            str(folder)], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(UNSHARE is None, reason="needs unshare for a private tmpfs")
def test_full_disk_then_space_again_loses_nothing(tmp_path: Path) -> None:
    """On a real 64 KB tmpfs (in a private mount namespace): records wait while the disk is full, the UI hears
    once that writes fail and once that they work again, and the transcript ends up complete and in order."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not tmpfs_mounts_here(mnt):
        pytest.skip("mounting a tmpfs in a private namespace is not allowed here")
    code = textwrap.dedent(f"""
        import json, os, subprocess
        from pathlib import Path
        from framework_core.core.session import load_transcript, open_session
        mnt = Path({str(mnt)!r})
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=True)
        s = open_session(mnt)
        said = []
        s.on_write_state = said.append
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            os.close(fd)
        for i in range(5):
            s.add_user(f"message {{i}} " + "y" * 3000)
        failing = s.write_error
        filler.unlink()
        s.add_user("after space came back")
        s.close()
        got = [m.content.split(" ")[0:2] for m in load_transcript(s.transcript.path).messages]
        print(json.dumps({{"said": said, "failing": failing, "got": got, "saved": s.saved}}))
    """)
    run = subprocess.run([UNSHARE, "--user", "--map-root-user", "--mount", sys.executable, "-c", code], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["failing"] and "No space left" in result["failing"]
    assert len(result["said"]) == 2 and result["said"][1] is None
    assert result["got"] == [["message", str(i)] for i in range(5)] + [["after", "space"]]
