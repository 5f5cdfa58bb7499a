"""Headless JSON output shaped like Claude Code's, so that `laca -p` drops into scripts written for it.

`--output-format json` prints one `result` object at the end; `stream-json` prints one object per line: a
`system`/`init` line first, an `assistant` line per reply (its text and tool calls), a `user` line per batch of
tool results, and the same `result` object last. Errors are JSON too when JSON was asked for.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from framework_core.core.events import AssistantMessageDone, CoreEvent, ModelRequestStarted, ToolCallFinished

if TYPE_CHECKING:
    from framework_core.core.events import TurnOutcome
    from framework_core.core.facade import Facade


def usage_dict(usage: Any) -> dict[str, int]:
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens}


@dataclass
class JsonReport:
    """Collects a one-shot turn's events; writes stream-json lines as they come when `stream` is set."""

    session_id: str = ""  # known once the session is open
    model: str = ""
    stream: bool = False
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    started: float = field(default_factory=time.monotonic)
    api_s: float = 0.0
    turns: int = 0
    denials: list[dict[str, Any]] = field(default_factory=list)
    _request_at: float | None = None
    _results: list[dict[str, Any]] = field(default_factory=list)

    def emit(self, obj: dict[str, Any]) -> None:
        obj.setdefault("uuid", str(uuid.uuid4()))  # Claude Code gives every line an id of its own
        self.out.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
        self.out.flush()

    @property
    def _ids(self) -> dict[str, str]:
        """The session's id as Claude Code gives it (a UUID) and LACA's own."""
        from framework_core.core.session import session_uuid

        return {"session_id": session_uuid(self.session_id) if self.session_id else "",
                "laca_session_id": self.session_id}

    def init(self, facade: "Facade") -> None:
        if not self.stream:
            return
        servers = facade.mcp_status() or []
        self.emit({"type": "system", "subtype": "init", "cwd": str(facade.workspace), **self._ids,
                   "tools": sorted(t.name for t in facade.tools()),
                   "mcp_servers": [{"name": getattr(s, "name", str(s)), "status": getattr(s, "state", "")}
                                   for s in servers],
                   "model": self.model, "provider": facade.provider_name, "permissionMode": facade.mode,
                   "apiKeySource": facade.key_env_var or "none"})

    def __call__(self, event: CoreEvent) -> None:
        if isinstance(event, ModelRequestStarted):
            self._request_at = time.monotonic()
        elif isinstance(event, AssistantMessageDone):
            self.turns += 1
            if self._request_at is not None:
                self.api_s += time.monotonic() - self._request_at
                self._request_at = None
            self._flush_results()
            if self.stream:
                self.emit({"type": "assistant", "message": self._assistant(event), "parent_tool_use_id": None,
                           **self._ids})
        elif isinstance(event, ToolCallFinished):
            result = event.result
            if result.status in ("declined_by_user", "blocked_by_policy"):
                self.denials.append({"tool_name": event.request.tool_name, "tool_use_id": event.request.request_id,
                                     "tool_input": dict(event.request.parameters), "status": result.status})
            self._results.append({"type": "tool_result", "tool_use_id": result.request_id,
                                  "content": result.to_model_text(), "is_error": result.is_error})

    def _assistant(self, ev: AssistantMessageDone) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": ev.message.content}] if ev.message.content else []
        content += [{"type": "tool_use", "id": c.request_id, "name": c.tool_name, "input": dict(c.parameters)}
                    for c in ev.message.tool_calls]
        return {"type": "message", "role": "assistant", "model": self.model, "content": content,
                "stop_reason": "tool_use" if ev.message.tool_calls else "end_turn",
                "usage": usage_dict(ev.usage)}

    def _flush_results(self) -> None:
        if self._results and self.stream:
            self.emit({"type": "user", "message": {"role": "user", "content": self._results},
                       "parent_tool_use_id": None, **self._ids})
        self._results = []

    def result(self, outcome: "TurnOutcome", facade: "Facade", *, cut_off: bool,
               calls: list[dict[str, Any]]) -> dict[str, Any]:
        """The closing `result` object (LACA's own keys kept beside Claude Code's)."""
        self._flush_results()
        error = outcome.error or ("interrupted" if outcome.interrupted else None) or \
            ("the reply was cut off before its end" if cut_off else None)
        cost = facade.cost(facade.session_usage()[0])
        return {"type": "result", "subtype": "error_during_execution" if error else "success",
                "is_error": bool(error), "duration_ms": int((time.monotonic() - self.started) * 1000),
                "duration_api_ms": int(self.api_s * 1000), "num_turns": self.turns, "result": outcome.text,
                **self._ids, "total_cost_usd": round(cost, 6) if cost is not None else None,
                "model": self.model, **_usage(facade, outcome), "permission_denials": self.denials,
                "error": error, "tool_calls": calls, "interrupted": outcome.interrupted, "cut_off": cut_off,
                "stopped_at_limit": outcome.stopped_at_limit, "modelUsage": self._model_usage(facade)}

    def _model_usage(self, facade: "Facade") -> dict[str, Any]:
        """Claude Code's `modelUsage`: the session's tokens and cost under the model's name."""
        usage, _requests = facade.session_usage()
        cost = facade.cost(usage)
        return {self.model or "unknown": {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens,
                                          "cacheReadInputTokens": usage.cache_read_tokens,
                                          "cacheCreationInputTokens": usage.cache_write_tokens,
                                          "costUSD": round(cost, 6) if cost is not None else None}}


def _usage(facade: "Facade", outcome: "TurnOutcome") -> dict[str, Any]:
    """This turn's tokens (`usage`, as /tokens counts a turn: compaction's requests included) and the session's
    (`total_usage`, more than the turn after --continue), each with its requests and cost where prices are known."""
    turn = facade.last_turn_usage() or (outcome.usage, 0)

    def figures(usage: Any, requests: int) -> dict[str, Any]:
        cost = facade.cost(usage)
        return {**usage_dict(usage), "requests": requests, "cost_usd": round(cost, 6) if cost is not None else None}

    return {"usage": figures(*turn), "total_usage": figures(*facade.session_usage())}


def error_result(message: str, *, fmt: str, exit_code: int) -> None:
    """A failure before the turn could start (config, key, session), as the JSON the caller asked for."""
    obj = {"type": "result", "subtype": "error_during_execution", "is_error": True, "duration_ms": 0,
           "num_turns": 0, "result": message, "error": message, "session_id": None, "total_cost_usd": None,
           "exit_code": exit_code, "cwd": os.getcwd()}
    print(json.dumps(obj, ensure_ascii=False), flush=True)
