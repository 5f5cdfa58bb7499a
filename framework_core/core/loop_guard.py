"""The loop guard: a turn stops when the model makes the same call (same tool, same arguments) again after it
was declined or failed, or `limit` times in a row (`repeated_call_limit`). Small models otherwise call one
tool again and again until the turn's round limit.

Pure: `LoopGuard.check(calls)` before a reply's calls run says whether to stop and why; `record(results)`
after they ran. One guard per turn. The brief (`icerc_full_text`) is not part of a call's identity.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from framework_core.lial_core import ToolRequest, ToolResult


def call_key(call: ToolRequest) -> str:
    return call.tool_name + " " + json.dumps(call.parameters, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class Stop:
    """Why the guard stops the turn: for the user (a notice) and the model (the calls' results)."""

    call: ToolRequest
    user_note: str
    model_note: str


@dataclass
class LoopGuard:
    limit: int = 3
    _failed: dict[str, str] = field(default_factory=dict)  # call key -> how it ended (was declined, failed)
    _last: str | None = None
    _run: int = 0  # how many times in a row the last call was made

    def check(self, calls: list[ToolRequest]) -> Stop | None:
        """Stop before the first of `calls` that repeats a refused call or makes one `limit` times in a row."""
        last, run = self._last, self._run
        for call in calls:
            key = call_key(call)
            if key in self._failed:
                how = self._failed[key]
                return Stop(call, f"Stopped the turn: the model repeated a {call.tool_name} call that {how}. "
                                  "Say what to do differently to go on.",
                            f"Not run: the same call {how} before, so LACA's loop guard stopped the turn. "
                            "Do not repeat it; the user will say how to go on.")
            run = run + 1 if key == last else 1
            last = key
            if run >= self.limit:
                return Stop(call, f"Stopped the turn: the model made the same {call.tool_name} call {run} times "
                                  "in a row. Send a message to go on.",
                            f"Not run: the same call was made {run} times in a row, so LACA's loop guard "
                            "stopped the turn. Use the results you have.")
        return None

    def record(self, calls: list[ToolRequest], results: list[ToolResult]) -> None:
        by_id = {r.request_id: r for r in results}
        for call in calls:
            key = call_key(call)
            self._run = self._run + 1 if key == self._last else 1
            self._last = key
            result = by_id.get(call.request_id)
            if result is not None and result.status in ("declined_by_user", "blocked_by_policy"):
                self._failed[key] = "was declined"
            elif result is not None and result.status == "error":
                self._failed[key] = "failed"

    def stopped_results(self, calls: list[ToolRequest], stop: Stop) -> list[ToolResult]:
        """One result per call of the stopped reply: none of them runs."""
        return [ToolResult(c.request_id, c.tool_name, "error", {"error_message": stop.model_note}) for c in calls]
