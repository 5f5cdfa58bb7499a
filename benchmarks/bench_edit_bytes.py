"""Bytes of a small read-edit task done with editFile against the same task done with writeFile.

The scripted task, in `laca -p --permission-mode accept-edits` against the fake OpenAI server: the model reads ten
lines around line 1,500 of a 3,000-line file (CRLF line endings), changes that one line, then answers. Done once
with `editFile` (the changed line only) and once with `writeFile` (the whole file sent back). Measured: the bytes
of every request the server received (the history carries the call's arguments into each later request) and the
bytes of the edit call's arguments (what the model has to write). Both runs check that exactly that one line
changed.

    .venv/bin/python -m benchmarks.bench_edit_bytes           # the figures
    .venv/bin/python -m benchmarks.bench_edit_bytes --write   # and appends them to benchmarks/RESULTS.md
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, absolute_row, ratio_row

ROOT = Path(__file__).resolve().parent.parent
LINES, TARGET = 3_000, 1_500
PROMPT = f"In big.txt, change line {TARGET} to say 'changed'."
MODEL = "gpt-6.2-sol"


def sample() -> bytes:
    return "".join(f"    value_{i:04d} = compute({i}, scale={i % 17})  # entry {i}\r\n"
                   for i in range(1, LINES + 1)).encode()


def _line(i: int) -> str:
    return f"    value_{i:04d} = compute({i}, scale={i % 17})  # entry {i}"


def run(way: str) -> tuple[list[int], int]:
    """(bytes of each request, bytes of the edit call's arguments) for the task done with `way`."""
    sys.path.insert(0, str(ROOT))
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.script import Reply, ToolCallSpec, icerc

    home = Path(tempfile.mkdtemp(prefix="laca-bench-"))
    ws = Path(tempfile.mkdtemp(prefix="laca-ws-"))
    original = sample()
    (ws / "big.txt").write_bytes(original)
    new_line = f"    value_{TARGET:04d} = 0  # changed"
    if way == "editFile":
        args = {"path": "big.txt", "old_string": _line(TARGET), "new_string": new_line}
    else:
        text = original.decode().replace(_line(TARGET) + "\r\n", new_line + "\r\n")
        args = {"path": "big.txt", "content": text}
    args["icerc_full_text"] = icerc(f"change line {TARGET} of big.txt")
    read = {"path": "big.txt", "offset": TARGET - 5, "limit": 10, "icerc_full_text": icerc("read big.txt")}
    with FakeOpenAIServer() as server:
        config = home / "bench.yaml"
        config.write_text(f"llm_provider: bench\nllm_settings:\n  bench:\n    type: openai\n"
                          f"    base_url: {server.base_url}\n    model: {MODEL}\n    api_key_env_var: BENCH_KEY\n")
        server.enqueue(Reply(tool_calls=[ToolCallSpec("readFile", read)]),
                       Reply(tool_calls=[ToolCallSpec(way, args)]), Reply(text=f"Line {TARGET} now says changed."))
        env = {**{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}, "HOME": str(home),
               "XDG_DATA_HOME": f"{home}/d", "XDG_CONFIG_HOME": f"{home}/c", "BENCH_KEY": "k"}
        subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--config", str(config),
                        "--permission-mode", "accept-edits", "-p", PROMPT], env=env, cwd=ws, capture_output=True,
                       check=True, timeout=120)
        sizes = list(server.sizes)
    after = (ws / "big.txt").read_bytes()
    expected = original.replace(_line(TARGET).encode() + b"\r\n", new_line.encode() + b"\r\n")
    if after != expected:
        raise AssertionError(f"{way}: the file is not the original with line {TARGET} changed")
    return sizes, len(json.dumps(args).encode())


def measure() -> list[Row]:
    edit, edit_call = run("editFile")
    write, write_call = run("writeFile")
    note = (f"requests {', '.join(f'{s:,}' for s in edit)} vs {', '.join(f'{s:,}' for s in write)} bytes; "
            "baseline = the same task through writeFile")
    return [ratio_row("read-edit task, 3,000-line file: bytes sent", sum(edit) / 1000, sum(write) / 1000, 0.25,
                      unit="KB", note=note),
            ratio_row("  the edit call the model writes", edit_call / 1000, write_call / 1000, 0.25, unit="KB",
                      note="the call's arguments, brief included"),
            absolute_row("  editFile call for a one-line change", edit_call / 1000, 2.0, "KB")]


def main() -> int:
    from benchmarks.common import format_table

    text = format_table(measure())
    print(text)
    if "--write" in sys.argv:
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write(f"\n## A one-line edit: editFile against writeFile (`python -m benchmarks.bench_edit_bytes`)\n\n"
                     f"Recorded {time.strftime('%Y-%m-%d %H:%M %Z')} with `laca -p --permission-mode accept-edits` "
                     f"against the fake OpenAI server: the model reads lines {TARGET - 5}-{TARGET + 4} of a "
                     f"{len(sample()):,}-byte file of {LINES:,} CRLF lines, changes line {TARGET}, answers; both "
                     "runs check that exactly that line changed. Bytes are the request bodies as the server received "
                     "them, and the edit call's arguments.\n\n```\n" + text + "\n```\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
