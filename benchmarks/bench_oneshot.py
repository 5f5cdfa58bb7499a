"""One-shot latency: `run_framework.py -p hi` vs ten lines using the openai SDK directly, on the same wire.

LACA's default provider (`openai`) talks the Responses API, so the baseline streams one reply from
`client.responses.create`; both import the whole SDK (`import openai` loads every `openai.types` module). Bytecode
is cached for both in the benchmark's own folder, with a reference row for LACA's modules compiled at each start
(see `bench_startup.bytecode_envs`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_startup import bytecode_envs, interleaved3
from benchmarks.common import Row, ratio_row, reference_row, timed

ROOT = Path(__file__).resolve().parent.parent
DIRECT = """
import os, openai
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="k", max_retries=0)
stream = client.responses.create(model="m", stream=True, input=[{"role": "user", "content": "hi"}])
for event in stream:
    if event.type == "response.output_text.delta":
        print(event.delta, end="", flush=True)
print()
"""


def measure(rounds: int = 7) -> list[Row]:
    sys.path.insert(0, str(ROOT))
    from tests.fakes.openai_server import FakeOpenAIServer

    home = tempfile.mkdtemp(prefix="laca-bench-")
    ws = tempfile.mkdtemp(prefix="laca-ws-")
    with FakeOpenAIServer() as server:
        env = {**{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}, "HOME": home,
               "XDG_DATA_HOME": f"{home}/d", "XDG_CONFIG_HOME": f"{home}/c", "OPENAI_API_KEY": "k",
               "OPENAI_BASE_URL": server.base_url}
        ours_cmd = [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "-p", "hi"]
        base_cmd = [sys.executable, "-c", DIRECT]

        def run(cmd: list[str], env: dict[str, str]) -> float:
            return timed(lambda: subprocess.run(cmd, env=env, cwd=ws, capture_output=True, check=True))

        def warm(cached_env: dict[str, str]) -> None:
            run(ours_cmd, cached_env)
            run(base_cmd, cached_env)

        cached, compiled = bytecode_envs(env, warm)
        ours, ours_compiled, base = interleaved3(lambda: run(ours_cmd, cached), lambda: run(ours_cmd, compiled),
                                                 lambda: run(base_cmd, cached), rounds)
    return [ratio_row("one-shot -p latency (end to end)", ours, base, 1.3),
            reference_row("  the same, LACA's modules compiled at each start", ours_compiled, base)]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
