"""Per-call cost over a long session: one `-p` run of 48 Safe calls (`ls`), one per reply, on the Responses
and the Anthropic wires. A call's cost is what the model sees: from the end of the reply that carries the call
to the arrival of the request that carries its result (the fake server takes both times on one clock). The
figure is the median of calls 39-48 against the median of calls 2-11; a flat session is near 1.0x.

The fake servers run in this process on loopback; the run's HOME and config folders are throwaway, and the
provider's address comes from the SDK's own environment variable, so nothing can reach a real endpoint.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Row, ratio_row, reference_row

ROOT = Path(__file__).resolve().parent.parent
CALLS = 48


def _timed(server_cls: type) -> type:
    class Timed(server_cls):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.arrived: list[float] = []
            self.done: list[float] = []
            super().__init__(*args, **kwargs)

        def handle_post(self, handler: Any, body: dict[str, Any]) -> None:
            self.arrived.append(time.perf_counter())
            try:
                super().handle_post(handler, body)
            finally:
                handler.wfile.flush()
                self.done.append(time.perf_counter())

    return Timed


def _session(wire: str) -> list[float]:
    """Per-call cost in ms for calls 1..CALLS (index 0 is call 1)."""
    sys.path.insert(0, str(ROOT))
    from tests.fakes.script import Reply, ToolCallSpec, icerc

    if wire == "anthropic":
        from tests.fakes.anthropic_server import FakeAnthropicServer as Server
        provider, url_var, key_var = "anthropic", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"
    else:
        from tests.fakes.openai_server import FakeOpenAIServer as Server  # type: ignore[assignment]
        provider, url_var, key_var = "openai", "OPENAI_BASE_URL", "OPENAI_API_KEY"
    home = Path(tempfile.mkdtemp(prefix="laca-bench-home-"))
    ws = Path(tempfile.mkdtemp(prefix="laca-bench-ws-"))
    (ws / "a.txt").write_text("a\n")
    with _timed(Server)() as server:
        for i in range(CALLS):
            call = ToolCallSpec("executeBashCommand", {"command": "ls", "icerc_full_text": icerc("ls")},
                                id=f"call_{i}")
            server.enqueue(Reply(tool_calls=[call]))
        server.enqueue(Reply(text="done"))
        env = {**{k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))},
               "HOME": str(home), "XDG_DATA_HOME": f"{home}/d", "XDG_CONFIG_HOME": f"{home}/c",
               "XDG_CACHE_HOME": f"{home}/cache", key_var: "k", url_var: server.base_url}
        cmd = [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", "--provider", provider,
               "-p", "list the files, once per reply"]
        subprocess.run(cmd, env=env, cwd=ws, capture_output=True, check=False, timeout=600)
        arrived, done = server.arrived, server.done
    return [(arrived[k + 1] - done[k]) * 1000 for k in range(min(CALLS, len(arrived) - 1))]


def measure() -> list[Row]:
    rows: list[Row] = []
    for wire in ("responses", "anthropic"):
        costs = _session(wire)
        if len(costs) < CALLS:
            rows.append(reference_row(f"per-call cost, {wire}: the run stopped early", float(len(costs)), CALLS,
                                      "calls"))
            continue
        early, late = statistics.median(costs[1:11]), statistics.median(costs[38:48])
        rows.append(ratio_row(f"per-call cost calls 39-48 vs 2-11, {wire}", late, early, 1.5, "ms",
                              note=f"call 2-11 median {early:.1f} ms, 39-48 median {late:.1f} ms"))
        rows.append(reference_row(f"  first call vs calls 2-11, {wire}", costs[0], early, "ms",
                                  note="-p has no idle moment to warm up in (a warm-up thread would slow a "
                                       "one-shot's start): its first call builds the policy's tables"))
    return rows


if __name__ == "__main__":
    from benchmarks.common import format_table

    print(format_table(measure()))
