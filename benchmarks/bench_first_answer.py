"""Time to the first answer in the REPL: from launch to the end of the first reply, the message sent as soon as
the prompt is drawn (pasted, or typed quickly), against a floor script measured in the same run.

The floor (`FLOOR`) does the least any terminal chat client on the same libraries does: prompt_toolkit and rich
draw a prompt, read a line, import the openai SDK, stream one reply from the same fake server (the Responses API,
the wire of LACA's default provider) and print it. Both run in a real pseudo-terminal (pexpect), with their
bytecode cached in the benchmark's own folder (`bench_startup.bytecode_envs`), interleaved round by round so
the machine's load hits both alike; the reply is the fake's default answer to the message, and its last words
on screen mark the end.

    .venv/bin/python -m benchmarks.bench_first_answer [rounds] [--against DIR]

`--against DIR` also measures another checkout of LACA (an earlier commit, e.g. from `git archive`) in the same
rounds, as a reference row: a change is judged beside its starting point on the same loaded machine.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, interleaved, ratio_row, reference_row, require_loopback

ROOT = Path(__file__).resolve().parent.parent
MESSAGE = "hello there"
END = "another item"  # the last words of the fake's default answer ("You said: …", then a two-item list)
FLOOR = """
import os
import rich.console
from prompt_toolkit import PromptSession

console = rich.console.Console()
console.print("ready")
line = PromptSession().prompt("floor> ")
import openai
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="k", max_retries=0)
stream = client.responses.create(model="fake-gpt", stream=True, store=False,
                                 input=[{"role": "user", "content": line}])
for event in stream:
    if event.type == "response.output_text.delta":
        console.print(event.delta, end="")
console.print()
PromptSession().prompt("floor> ")
"""


def _env(home: str, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "NO_COLOR"}
    env.update({"HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_DATA_HOME": f"{home}/.local/share",
                "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": base_url, "TERM": "xterm",
                "PROMPT_TOOLKIT_NO_CPR": "1", "LACA_TYPEAHEAD_GUARD_S": "0"})
    return env


def first_answer(argv: list[str], prompt: str, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(seconds from launch to the end of the first reply, of which to the prompt); the message is sent the
    moment the prompt shows."""
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=cwd, dimensions=(40, 120), encoding="utf-8", timeout=60)
    try:
        child.expect_exact(prompt)
        at_prompt = time.perf_counter() - start
        child.send(MESSAGE + "\r")
        child.expect_exact(END)
        return time.perf_counter() - start, at_prompt
    finally:
        child.terminate(force=True)


def measure(rounds: int = 9, against: str | None = None) -> list[Row]:
    sys.path.insert(0, str(ROOT))
    from benchmarks.bench_startup import bytecode_envs
    from tests.fakes.openai_server import FakeOpenAIServer

    home = tempfile.mkdtemp(prefix="laca-bench-")
    ws = tempfile.mkdtemp(prefix="laca-ws-")
    ours_argv = [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp"]
    floor_argv = [sys.executable, "-c", FLOOR]
    load = os.getloadavg()[0]
    with FakeOpenAIServer() as server:
        require_loopback(server.base_url)
        prompts: dict[str, list[float]] = {"ours": [], "floor": []}
        before: list[float] = []
        before_argv = [sys.executable, str(Path(against) / "run_framework.py"), "--no-mcp"] if against else []

        def ours(env: dict[str, str]) -> float:
            total, at_prompt = first_answer(ours_argv, "forge>", env, ws)
            prompts["ours"].append(at_prompt)
            return total

        def floor(env: dict[str, str]) -> float:
            total, at_prompt = first_answer(floor_argv, "floor>", env, ws)
            prompts["floor"].append(at_prompt)
            if before_argv:  # the earlier checkout, in the same round
                before.append(first_answer(before_argv, "forge>", env, ws)[0])
            return total

        def warm(env: dict[str, str]) -> None:
            ours(env)
            floor(env)

        cached, _ = bytecode_envs(_env(home, server.base_url), warm)
        prompts, before[:] = {"ours": [], "floor": []}, []
        ours_t, floor_t = interleaved(lambda: ours(cached), lambda: floor(cached), rounds)
    load = max(load, os.getloadavg()[0])
    rows = [ratio_row("first answer, message sent at the prompt", ours_t, floor_t, 1.5,
                      note=f"launch to the end of the first reply, median of {rounds}; floor = prompt_toolkit + "
                           f"rich + the openai SDK streaming one reply; load average up to {load:.1f}"),
            reference_row("  of which to the prompt", statistics.median(prompts["ours"]),
                          statistics.median(prompts["floor"]))]
    if before:
        rows.append(reference_row(f"  the same, {Path(against or '').name or against} (earlier checkout)",
                                  statistics.median(before), floor_t))
    return rows


if __name__ == "__main__":
    from benchmarks.common import format_table

    args = sys.argv[1:]
    other = args[args.index("--against") + 1] if "--against" in args else None
    count = next((int(a) for a in args if a.isdigit()), 9)
    print(format_table(measure(count, other)))
