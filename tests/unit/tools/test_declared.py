"""Declared tools: validation on load, argv slots without a shell, adversarial arguments."""

from __future__ import annotations

import json
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from framework_core.core.approval import ScriptedApprover
from framework_core.errors import ConfigError
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine
from framework_core.tools.base import ToolRegistry
from framework_core.tools.declared import load_tools_file

# a python3 of the system's program trees: a sandboxed tool sees those, not the checkout the tests run from
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "/usr/bin/python3"
ECHO_ARGS = f"{PYTHON} -c 'import sys, json; print(json.dumps(sys.argv[1:]))'"


def tools_file(ws: Path, text: str) -> Path:
    p = ws / "tools.yaml"
    p.write_text(text)
    return p


def engine(ws: Path, text: str, answers=("y",) * 5) -> TEPSEngine:
    registry = ToolRegistry()
    for spec in load_tools_file(tools_file(ws, text)):
        registry.register(spec)
    return TEPSEngine({}, registry=registry, workspace=ws, approver=ScriptedApprover(answers))


ARGV_TOOL = f"""
- name: show_args
  description: prints its argv as JSON
  type: cli
  requires_approval: false
  config:
    command: ["{PYTHON}", "-c", "import sys, json; print(json.dumps(sys.argv[1:]))", "{{query}}"]
    params:
      - {{name: query, type: string, max_length: 50}}
      - {{name: path, type: filepath, required: false, flag: --path}}
      - {{name: mode, type: enum, values: [fast, slow], required: false, flag: --mode}}
      - {{name: n, type: integer, required: false, minimum: 1, maximum: 9, flag: -n}}
"""


def call(teps: TEPSEngine, name: str, **args):
    return teps.execute(ToolRequest("r", name, args, "brief"))


def test_injection_stays_one_argument(workspace: Path) -> None:
    teps = engine(workspace, ARGV_TOOL)
    res = call(teps, "show_args", query="my-query; ls -la $(id) `x` && rm -rf ~")
    assert res.status == "success"
    assert json.loads(res.data["stdout"]) == ["my-query; ls -la $(id) `x` && rm -rf ~"]


def test_typed_params_and_flags(workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    teps = engine(workspace, ARGV_TOOL)
    res = call(teps, "show_args", query="q", path="f.txt", mode="fast", n=3)
    assert json.loads(res.data["stdout"]) == ["q", "--path", "f.txt", "--mode", "fast", "-n", "3"]


@pytest.mark.parametrize(("args", "problem"), [
    ({"query": "q", "path": "../../etc/passwd"}, "outside the workspace"),
    ({"query": "q", "path": "/etc/passwd"}, "relative"),
    ({"query": "x" * 51}, "`query` must be at most 50 characters long, got 51"),
    ({"query": 42}, "`query` must be a string, got 42"),
    ({"query": "q", "mode": "turbo"}, "`mode` must be one of 'fast', 'slow', got 'turbo'"),
    ({"query": "q", "n": 10}, "`n` must be at most 9, got 10"),
    ({"query": "q", "n": "3"}, "`n` must be an integer, got '3'"),
    ({"query": "q", "extra": 1}, "unknown argument `extra`; the arguments are: query, path, mode, n"),
    ({}, "`query` is required (a string)"),
    ({"query": "a\0b"}, "contains a NUL byte"),
    ({"query": "--upload-pack=evil"}, "may not start with '-'"),
])
def test_bad_arguments_become_error_results_and_nothing_runs(workspace: Path, args: dict, problem: str) -> None:
    teps = engine(workspace, ARGV_TOOL)
    res = teps.execute(ToolRequest("r", "show_args", args, "b"))
    assert res.status == "error" and problem in res.data["error_message"]


def test_symlink_out_of_workspace_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    os.symlink(outside, workspace / "link.txt")
    teps = engine(workspace, ARGV_TOOL)
    res = call(teps, "show_args", query="q", path="link.txt")
    assert res.status == "error" and "outside the workspace" in res.data["error_message"]


def test_requires_approval_defaults_to_true(workspace: Path) -> None:
    specs = load_tools_file(tools_file(workspace, """
- name: t
  description: d
  type: cli
  config: {command: [echo]}
"""))
    assert specs[0].permission == "ask" and specs[0].source.startswith("declared:")


@pytest.mark.parametrize(("text", "where", "problem"), [
    ("- name: t\n  description: d\n  type: cli\n  config: {}\n", "line 1 (key '[0]')",
     "tool 't': a cli tool needs config.command (a list: program and arguments)"),
    ("- name: t\n  description: d\n  type: shell\n  config: {command: [x]}\n", "line 3 (key '[0].type')",
     "tool 't': Input should be 'cli' or 'api' (got 'shell')"),
    ("- name: readFile\n  description: d\n  type: cli\n  config: {command: [x]}\n", "line 1 (key '[0]')",
     "tool 'readFile': 'readFile' is a built-in tool name"),
    ("- name: t\n  description: d\n  type: cli\n  config: {command: [x, '{nope}']}\n", "line 1 (key '[0]')",
     "tool 't': config.command uses {nope} but no such parameter is declared"),
    ("- name: t\n  description: d\n  type: cli\n  config:\n    command: [x]\n    params: [{name: u, type: url}]\n",
     "line 6 (key '[0].config.params[0]')", "tool 't': a url parameter needs 'allowed_hosts'"),
    ("- name: t\n  type: cli\n  config: {command: [x]}\n", "line 1 (key '[0].description')",
     "tool 't': 'description' is required here and missing"),
    ("tools:\n  - name: t\n    description: d\n    type: cli\n    config: {command: [x], comand: [y]}\n",
     "line 5 (key 'tools[0].config.comand')",
     "tool 't': unknown key 'comand'; expected one of: command, base_url, method, api_key_env, api_key_header, "
     "api_key_prefix, timeout_s, params (check the spelling and the indentation)"),
    ("tools:\n  - {name: t, description: d, type: cli, config: {command: [x]}}\n"
     "  - {name: t, description: e, type: cli, config: {command: [y]}}\n", "line 3 (key 'tools[1].name')",
     "tool 't': declared twice; keep one"),
    ("tools: 5\n", "line 1 (key 'tools')", "expected a list of tools (or a mapping with 'tools:'), not a number"),
])
def test_invalid_file_names_file_line_key_and_problem(workspace: Path, text: str, where: str, problem: str) -> None:
    path = tools_file(workspace, text)
    with pytest.raises(ConfigError) as err:
        load_tools_file(path)
    assert str(err.value) == f"{path}, {where}: {problem}"


def test_api_tool_credential_never_reaches_model(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):  # noqa: N802
            seen["auth"] = self.headers.get("authorization")
            body = json.dumps({"echo": self.path, "auth": self.headers.get("authorization")}).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("SEARCH_KEY", "supersecret-123")
    try:
        teps = engine(workspace, f"""
- name: search
  description: search
  type: api
  config:
    base_url: http://127.0.0.1:{server.server_address[1]}/search
    api_key_env: SEARCH_KEY
    params:
      - {{name: q, type: string}}
      - {{name: site, type: url, allowed_hosts: [example.com], required: false}}
""")
        res = call(teps, "search", q="hello world")
        assert res.status == "success" and res.data["status_code"] == 200
        assert seen["auth"] == "Bearer supersecret-123"
        assert "supersecret" not in res.to_model_text()
        assert "supersecret" not in json.dumps(teps.registry.get("search").llm_schema().parameters)
        bad = call(teps, "search", q="x", site="https://evil.example/x")
        assert bad.status == "error" and "not allowed" in bad.data["error_message"]
    finally:
        server.shutdown()


def test_example_tools_yaml_loads() -> None:
    specs = load_tools_file(Path(__file__).resolve().parents[3] / "tools.example.yaml")
    assert {s.name for s in specs} == {"word_count", "git_log_oneline"}


def test_declared_tools_share_the_one_output_budget(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long CLI output and a long API body come back cut like any result, the whole kept for paging, the
    API key masked before anything is kept."""
    monkeypatch.setenv("BIG_KEY", "supersecret-456")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):  # noqa: N802
            body = "".join(f"item {i} {self.headers.get('authorization')}\n" for i in range(20_000)).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        teps = engine(workspace, f"""
- name: rows
  description: many rows
  type: cli
  requires_approval: false
  config:
    command: ["seq", "1", "{{n}}"]
    params:
      - {{name: n, type: integer}}
- name: items
  description: many items
  type: api
  requires_approval: false
  config:
    base_url: http://127.0.0.1:{server.server_address[1]}/items
    api_key_env: BIG_KEY
    params:
      - {{name: q, type: string}}
""")
        rows, items = call(teps, "rows", n=100_000), call(teps, "items", q="all")
    finally:
        server.shutdown()
    text = rows.to_model_text()
    assert len(text) < 10_200 and text.startswith("ok · exit 0 · ") and "stdout cut: " in text
    assert text.splitlines()[1] == "1" and text.endswith("\n100000") and "Read them with readFile" in text
    body = items.to_model_text()
    saved = Path(json.loads(body.split("Read them with readFile ", 1)[1].split(" …]")[0])["path"])
    assert len(body) < 10_200 and body.startswith("ok · HTTP 200 · cut: ") and "supersecret" not in body
    assert saved.read_text().count("item ") == 20_000 and "supersecret" not in saved.read_text()
