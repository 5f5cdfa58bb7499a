"""One construction: `TEPSEngine(config)` alone builds its parts as the app does (the user's and the workspace's
rule files, the `sandbox.*` settings, the undo limit), so the same request gets the same decision and result shape
both ways; and it leaves no temporary folder behind."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from framework_core.app.wiring import build_agent
from framework_core.config.load import Overrides, load_config
from framework_core.core.approval import ScriptedApprover
from framework_core.core.session import open_session
from framework_core.lial_core import ToolRequest
from framework_core.teps import TEPSEngine

REQUESTS = [
    ToolRequest("allowed", "executeBashCommand", {"command": "touch allowed.txt"}, "b"),  # the user's rule allows
    ToolRequest("denied", "executeBashCommand", {"command": "git push origin main"}, "b"),  # the workspace's denies
    ToolRequest("protected", "writeFile", {"path": "secret.cfg", "content": "x\n"}, "b"),  # sandbox.protected_paths
    ToolRequest("asks", "executeBashCommand", {"command": "touch other.txt"}, "b"),
]


def shape(result) -> tuple:
    return result.status, sorted(result.data), result.data.get("reasons"), result.data.get("exit_code")


@pytest.fixture
def configured(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user_rules = Path(os.environ["XDG_CONFIG_HOME"]) / "laca" / "rules.yaml"
    user_rules.write_text("rules:\n  - name: mine\n    action: allow\n    prefix: [touch, allowed.txt]\n")
    (workspace / ".laca").mkdir()
    (workspace / ".laca" / "rules.yaml").write_text("rules:\n  - name: no-push\n    action: deny\n"
                                                    "    prefix: [git, push]\n")
    (workspace / "framework_config.yaml").write_text("sandbox:\n  protected_paths: [secret.cfg]\n"
                                                     "  undo_max_mb: 7\n")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    return workspace


def test_teps_alone_and_the_app_built_teps_decide_alike(configured: Path) -> None:
    app_approver = ScriptedApprover(["n", "n"])
    loaded = load_config(configured, Overrides())
    parts = build_agent(loaded, events=lambda e: None, approver=app_approver, session=open_session(
        configured.parent / "data"), start_mcp=False)
    app = parts.agent.teps
    alone_approver = ScriptedApprover(["n", "n"])
    alone = TEPSEngine({"command_timeout_s": 30}, workspace=configured, approver=alone_approver)
    results = {}
    for name, teps in (("app", app), ("alone", alone)):
        results[name] = [shape(teps.execute(req)) for req in REQUESTS]
        (configured / "allowed.txt").unlink()
    assert results["app"] == results["alone"]
    assert [r[0] for r in results["alone"]] == ["success", "blocked_by_policy", "declined_by_user", "declined_by_user"]
    assert ([r.request.request_id for r in app_approver.seen] == [r.request.request_id for r in alone_approver.seen]
            == ["protected", "asks"])
    assert alone_approver.seen[0].control_note and alone_approver.seen[0].grant_options == []
    assert alone.undo.max_bytes == app.undo.max_bytes == 7 * 1024 * 1024
    assert alone.sandbox.protected_extra == app.sandbox.protected_extra == ("secret.cfg",)
    assert alone.settings.command_timeout_s == 30  # the given teps_settings keys on top of the loaded config


def test_teps_alone_leaves_no_temporary_folder(workspace: Path) -> None:
    teps = TEPSEngine({}, workspace=workspace, approver=ScriptedApprover(["y"]))
    assert teps.execute(ToolRequest("t", "executeBashCommand", {"command": "touch t.txt"}, "b")).status == "success"
    undo_root, runtime = teps.undo.root, teps.sandbox._runtime
    assert undo_root.is_dir() and runtime is not None and runtime.is_dir()
    teps.close()
    assert not runtime.exists()
    del teps
    gc.collect()
    assert not undo_root.exists()
