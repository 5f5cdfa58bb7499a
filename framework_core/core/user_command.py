"""`!cmd` in the REPL: the user's own command, run through the same sandboxed executor as an approved call.

The workspace is writable (the change can be undone with /undo, as an approved command's), the network is
given only when the policy says the command uses it, credentials stay hidden. The run is recorded in the
transcript, shown like a tool call, and told to the model with the next message (bounded).
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

from framework_core.errors import ToolError
from framework_core.core.events import ToolCallFinished, ToolCallStarted, ToolOutputChunk
from framework_core.lial_core import ToolRequest, ToolResult, ToolStatus

if TYPE_CHECKING:
    from framework_core.core.agent import Agent

NOTE_CHARS = 2000  # of its output, told to the model
_ids = itertools.count(1)


def run_user_command(agent: "Agent", command: str) -> ToolResult:
    from framework_core.policy.classifier import classify_command
    from framework_core.tools.base import CallScope

    teps = agent.teps
    request = ToolRequest(f"user-shell-{next(_ids)}", "executeBashCommand", {"command": command})
    spec = teps.registry.get("executeBashCommand")
    assert spec is not None, "the bash tool is built in"
    ctx = teps.context
    ctx.scope = CallScope(writes=True, network=classify_command(command).network)
    ctx.on_output = lambda text: agent.events(ToolOutputChunk(request.request_id, text))
    agent.events(ToolCallStarted(request, "Run command", command, True, "you typed it (!)"))
    started = time.monotonic()
    try:
        data = spec.handler({"command": command}, ctx)
        code = data.get("exit_code")
        status: ToolStatus = "success" if code == 0 else "error"
        result = ToolResult(request.request_id, request.tool_name, status,
                            data if status == "success" else {"error_message": f"exited with status {code}", **data})
    except ToolError as exc:
        result = ToolResult(request.request_id, request.tool_name, "error", {"error_message": str(exc)})
    finally:
        ctx.on_output = None
    agent.events(ToolCallFinished(request, result, time.monotonic() - started))
    agent.session.record({"type": "user_command", "command": command, "status": result.status,
                          "exit_code": result.data.get("exit_code"), "changes": result.data.get("changes")})
    agent.note_for_model(note_text(command, result))
    return result


def note_text(command: str, result: ToolResult) -> str:
    d = result.data
    output = ((d.get("stdout") or "") + (d.get("stderr") or "")).strip() or d.get("error_message") or ""
    if len(output) > NOTE_CHARS:
        output = output[: NOTE_CHARS // 2] + "\n[…]\n" + output[-NOTE_CHARS // 2:]
    changes = f"; {d['changes']}" if d.get("changes") else ""
    return (f"the user ran `{command}` themselves (exit {d.get('exit_code')}{changes}). Its output:\n{output}"
            if output else f"the user ran `{command}` themselves (exit {d.get('exit_code')}{changes}); no output.")
