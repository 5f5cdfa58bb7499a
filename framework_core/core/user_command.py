"""`!cmd` in the REPL: the user's own command, run through the same sandboxed executor as an approved call.

The workspace is writable (the change can be undone with /undo, as an approved command's), the network is
given only when the policy says the command uses it, credentials stay hidden. The run is shown like a tool call
and its result passes the one result budget (`TEPSEngine.bounded`: head and tail, the rest saved where every
cut result is); the turn loop records it and tells the model with the next message.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

from framework_core.core.events import EventSink, ToolCallFinished, ToolCallStarted, ToolOutputChunk
from framework_core.errors import ToolError
from framework_core.lial_core import ToolRequest, ToolResult, ToolStatus

if TYPE_CHECKING:
    from framework_core.teps import TEPSEngine

_ids = itertools.count(1)


def run_user_command(teps: "TEPSEngine", events: EventSink, command: str) -> ToolResult:
    """Run `command` as an approved bash call would run; returns its result as the model will read it."""
    from framework_core.policy.classifier import classify_command
    from framework_core.tools.base import CallScope

    request = ToolRequest(f"user-shell-{next(_ids)}", "executeBashCommand", {"command": command})
    spec = teps.registry.get("executeBashCommand")
    assert spec is not None, "the bash tool is built in"
    ctx = teps.context
    ctx.scope = CallScope(writes=True, network=classify_command(command).network)
    ctx.on_output = lambda text: events(ToolOutputChunk(request.request_id, text))
    events(ToolCallStarted(request, "Run command", command, True, "you typed it (!)"))
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
    result = teps.bounded(result)
    events(ToolCallFinished(request, result, time.monotonic() - started))
    return result


def record(command: str, result: ToolResult) -> dict:
    """The transcript's record of a `!cmd`."""
    return {"type": "user_command", "command": command, "status": result.status,
            "exit_code": result.data.get("exit_code"), "changes": result.data.get("changes")}


def note_text(command: str, result: ToolResult) -> str:
    """What the model is told: the command and its result as a tool call's reads (already within the budget)."""
    return f"the user ran `{command}` themselves. What it gave:\n{result.to_model_text()}"
