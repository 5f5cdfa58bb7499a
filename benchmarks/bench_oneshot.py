"""One-shot latency: `run_framework.py -p hi` vs ten lines using the openai SDK directly."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import Row, interleaved, ratio_row, timed

ROOT = Path(__file__).resolve().parent.parent
DIRECT = """
import os, openai
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="k", max_retries=0)
stream = client.chat.completions.create(model="m", stream=True, messages=[{"role": "user", "content": "hi"}],
                                        stream_options={"include_usage": True})
for chunk in stream:
    for c in chunk.choices:
        if c.delta.content:
            print(c.delta.content, end="", flush=True)
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

        def run(cmd: list[str]) -> float:
            return timed(lambda: subprocess.run(cmd, env=env, cwd=ws, capture_output=True, check=True))

        ours, base = interleaved(lambda: run(ours_cmd), lambda: run(base_cmd), rounds)
    return [ratio_row("one-shot -p latency (end to end)", ours, base, 1.3)]


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
