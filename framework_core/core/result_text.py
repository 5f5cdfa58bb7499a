"""What the model reads of a tool result: plain text, the same on every wire API.

A `ToolResult` (status and data) stays the internal record; the model gets one short header line (how the
call ended: status, exit code, duration, what was cut), then the output as it is: stdout and stderr
labelled only when both are there, a file's or a server's content. Errors, refusals and dry runs read as
plain sentences. Nothing is JSON-escaped, so a newline costs one character, not two.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from framework_core.lial_core import ToolResult

#: Shown on screen or kept for the transcript only: the marker in the text already says where the whole is.
SCREEN_ONLY = {"images", "full_output_path", "output_bytes", "file_path", "bytes_written", "file_size", "status",
               "reasons", "total_lines"}
STREAMS = ("stdout", "stderr")
BODIES = ("content", "body")  # a file's text, an MCP server's content, a declared API tool's response
#: Short notes after the output, each one line: "sandbox: ...".
NOTES = ("sandbox", "undo_note", "env_withheld", "would_run", "details")
#: Put before a refusal's message when the message is a fragment rather than a sentence of its own.
OPENING = {"declined_by_user": "Stopped", "blocked_by_policy": "Blocked by policy", "dry_run": "Dry run"}


def render(result: "ToolResult") -> str:
    """The plain text the model reads for one tool result."""
    data = {k: v for k, v in result.data.items() if k not in SCREEN_ONLY}
    lines = [_header(result.status, data)]
    lines += _output(data)
    for key in NOTES:
        if data.get(key):
            lines.append(f"{key.replace('_', ' ')}: {_value(data[key])}")
    handled = {"exit_code", "duration_s", "cut", "changes", "cancelled", "lines", "status_code", "message",
               "error_message", "user_reason", *STREAMS, *BODIES, *NOTES}
    lines += [f"{key}: {_value(value)}" for key, value in data.items() if key not in handled]
    return "\n".join(line for line in lines if line)


def _header(status: str, data: dict[str, Any]) -> str:
    """One line: how the call ended. A success is 'ok · exit 0 · 0.02 s'; anything else a sentence."""
    facts = []
    if "status_code" in data:
        facts.append(f"HTTP {data['status_code']}")
    if "exit_code" in data:
        facts.append("no exit code" if data["exit_code"] is None else f"exit {data['exit_code']}")
    if isinstance(data.get("duration_s"), (int, float)):
        facts.append(f"{data['duration_s']:.2f} s")
    for key in ("lines", "changes", "cut"):
        if data.get(key):
            facts.append(str(data[key]))
    if data.get("cancelled"):
        facts.append("cancelled by the user (Ctrl-C)")
    if status == "success":
        first = " · ".join(["ok", *facts])
        return first + (f"\n{data['message']}" if data.get("message") else "")
    if status == "error":
        sentence = f"Error: {data.get('error_message') or 'the tool failed'}"
    else:  # a message that starts as a sentence is one ("User declined execution."); a fragment gets an opening
        message = str(data.get("message") or "").strip()
        sentence = message if message[:1].isupper() else f"{OPENING.get(status, status)}: {message or 'not run'}"
    if data.get("user_reason"):
        sentence = f"{_sentence(sentence)} Their reason: {data['user_reason']}"
    return sentence + (f" ({' · '.join(facts)})" if facts else "")


def _output(data: dict[str, Any]) -> list[str]:
    """The output as it is; stdout and stderr labelled only when both are there."""
    streams = [(name, str(data[name])) for name in STREAMS if data.get(name)]
    bodies = [str(data[name]) for name in BODIES if name in data]
    if len(streams) == 2:
        out = [f"{name}:\n{text.rstrip(chr(10))}" for name, text in streams]
    else:
        out = [text.rstrip("\n") for _, text in streams]
    out += [text.rstrip("\n") or "(empty)" for text in bodies]
    if not out and ("exit_code" in data or any(name in data for name in STREAMS)):
        out.append("(no output)")
    return out


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
