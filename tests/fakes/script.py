"""What the fake LLM servers answer: scripted replies, faults, and a deterministic default for manual tests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any]
    id: str | None = None
    raw_arguments: str | None = None  # send these exact characters instead (e.g. malformed JSON)


@dataclass
class Fault:
    kind: str  # "status" | "drop" | "truncate" | "stall"
    status: int = 500
    retry_after_ms: int | None = None
    retry_after: float | None = None
    after_chunks: int = 0
    seconds: float = 0.0
    error_type: str = ""
    ping_every: float = 0.0
    message: str = ""

    @classmethod
    def http(cls, status: int, *, retry_after_ms: int | None = None, retry_after: float | None = None,
             error_type: str = "", message: str = "") -> "Fault":
        """An HTTP error answer; `error_type` / `message` replace the body's (e.g. 429 `insufficient_quota`)."""
        return cls("status", status=status, retry_after_ms=retry_after_ms, retry_after=retry_after,
                   error_type=error_type, message=message)

    @classmethod
    def drop_mid_stream(cls, after_chunks: int = 2) -> "Fault":
        return cls("drop", after_chunks=after_chunks)

    @classmethod
    def truncate(cls) -> "Fault":
        return cls("truncate")

    @classmethod
    def sse_error(cls, error_type: str = "overloaded_error", after_chunks: int = 1) -> "Fault":
        """An error event inside a 200 stream (Anthropic `event: error`, OpenAI `data: {"error": …}`)."""
        fault = cls("sse_error", after_chunks=after_chunks)
        fault.error_type = error_type
        return fault

    @classmethod
    def stall(cls, seconds: float) -> "Fault":
        """The response starts (200, headers) and then nothing comes; after `seconds` the connection drops."""
        return cls("stall", seconds=seconds)

    @classmethod
    def silence(cls, seconds: float, ping_every: float = 0.0) -> "Fault":
        """Silence before the first token, as a model thinking unseen: the stream opens, then nothing (or only
        keep-alive pings every `ping_every` seconds) for `seconds`, then the reply comes normally."""
        fault = cls("silence", seconds=seconds)
        fault.ping_every = ping_every
        return fault


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    chunk_size: int = 8
    fault: Fault | None = None
    delay_s: float = 0.0  # pause between chunks
    usage: tuple[int, int] = (11, 7)
    # Shown reasoning sent before the reply: a Responses reasoning summary, a Chat `reasoning_content`
    # or `<think>` text (as the server's dialect does it).
    reasoning: str = ""
    # How the reply ends, in neutral words each wire translates: "" naturally; "limit": cut by the output
    # limit (Chat `length`, Responses `incomplete`, Messages `max_tokens`, where a tool call is cut mid-way);
    # "filter": stopped by the content filter; "refusal": declined (Messages `refusal` with stop_details);
    # "pause": a long turn paused (Messages `pause_turn`); "context": the context window filled up.
    stop: str = ""
    redacted: bool = False  # Messages: also send a `redacted_thinking` block (when thinking is on)
    cached_tokens: int = 0  # of usage[0], read from the prompt cache


def icerc(command: str) -> str:
    return (f"Intent: carry out the user's request.\nCommand: {command}\nExpected outcome: the command completes.\n"
            "Risk assessment: low to moderate, see the command.\nConfirmation request: may I run this?")


MARKDOWN_SAMPLE = """# Plan

I read `framework_core/policy` and the **classifier** is *mostly* fine; see [the docs](https://example.com/docs).

## Steps
1. Read the file
2. Change the rule
   - nested bullet with `code`
   - a nested item long enough to wrap at the edge of an eighty-column terminal, to show the hanging indent
3. Run the tests

- [x] done
- [ ] open

> A quoted note with **bold** inside.

```python
def classify(cmd: str) -> Level:
    \"\"\"Return the level.\"\"\"
    if cmd.startswith("rm"):  # dangerous
        return Level.DANGEROUS
    return Level.SAFE
```

| check | result |
|-------|--------|
| lint  | ok     |

---
Done.
"""


def default_reply(messages: list[dict[str, Any]]) -> Reply:
    """Deterministic behaviour when nothing is queued (manual testing in a terminal). A message may start with
    modifiers: `think` (the reply comes with reasoning), `cut` (the output limit stops it; a tool call in it
    is cut mid-way), `refuse` (declined); `rounds: N` asks for N tool rounds in a row."""
    last = messages[-1] if messages else {"role": "user", "content": ""}
    start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("kind") == "user"), 0)
    asked = messages[start].get("content", "") if messages else ""
    if m := re.search(r"rounds:\s*(\d+)", asked if isinstance(asked, str) else ""):
        done = len([x for x in messages[start:] if x.get("kind") == "tool_result"])
        return _modified(asked, _round(done, int(m.group(1))))
    if last.get("kind") == "tool_result":
        return Reply(text=f"Tool finished: {summarise(last.get('content', ''))}")
    text = last.get("content", "") if isinstance(last.get("content"), str) else ""
    return _modified(text, _reply_to(re.sub(r"^((think|cut|refuse)\s+)+", "", text.strip())))


def _round(done: int, wanted: int) -> Reply:
    if done >= wanted:
        return Reply(text=f"Done: {wanted} rounds.")
    cmd = f"echo round {done + 1}"
    return Reply(text=f"Round {done + 1} of {wanted}.", tool_calls=[
        ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": icerc(cmd)})])


def _modified(text: str, reply: Reply) -> Reply:
    words = re.match(r"^((?:think|cut|refuse)\s+)*", text.strip()).group(0).split()
    if "think" in words:
        reply.reasoning = "Let me think this through: what is asked, which tool fits, what could go wrong."
    if "cut" in words:
        reply.stop = "limit"
    if "refuse" in words:
        reply.stop = "refusal"
    return reply


def _reply_to(text: str) -> Reply:
    if m := re.search(r"multi:\s*(.+)", text, re.S):
        cmds = [c.strip() for c in m.group(1).split(";;") if c.strip()]
        return Reply(text=f"Running {len(cmds)} commands.", tool_calls=[
            ToolCallSpec("executeBashCommand", {"command": c, "icerc_full_text": icerc(c)}) for c in cmds])
    if m := re.search(r"run:\s*(.+)", text, re.S):
        cmd = m.group(1).strip()
        return Reply(text="Let me run that.", tool_calls=[
            ToolCallSpec("executeBashCommand", {"command": cmd, "icerc_full_text": icerc(cmd)})])
    if m := re.search(r"edit:\s*(.+)", text, re.S):  # edit: PATH ;; OLD ;; NEW  (\n in OLD or NEW: a new line)
        parts = [p.strip().replace("\\n", "\n") for p in m.group(1).split(";;")]
        if len(parts) == 3:
            args = {"path": parts[0], "old_string": parts[1], "new_string": parts[2],
                    "icerc_full_text": icerc(f"edit {parts[0]}")}
            return Reply(text="Editing the file.", tool_calls=[ToolCallSpec("editFile", args)])
    if m := re.search(r"patch:\s*(.+)", text, re.S):  # patch: *** Begin Patch\n...\n*** End Patch
        patch = m.group(1).strip().replace("\\n", "\n")
        files = re.findall(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", patch, re.M)
        return Reply(text="Applying the patch.", tool_calls=[ToolCallSpec(
            "applyPatch", {"patch": patch, "icerc_full_text": icerc("patch " + ", ".join(files))})])
    if m := re.search(r"read:\s*(\S+)", text):
        args = {"path": m.group(1), "icerc_full_text": icerc(f"read {m.group(1)}")}
        return Reply(tool_calls=[ToolCallSpec("readFile", args)])
    if m := re.search(r"write:\s*(\S+)\s+(.*)", text, re.S):
        return Reply(text="Writing the file.", tool_calls=[ToolCallSpec(
            "writeFile", {"path": m.group(1), "content": m.group(2), "icerc_full_text": icerc(f"write {m.group(1)}")})])
    if m := re.search(r"tool:\s*(\S+)\s*(\{.*\})?", text, re.S):
        args = json.loads(m.group(2)) if m.group(2) else {}
        args.setdefault("icerc_full_text", icerc(f"call {m.group(1)}"))
        return Reply(tool_calls=[ToolCallSpec(m.group(1), args)])
    if m := re.search(r"long:\s*(\d+)", text):
        n = int(m.group(1))
        paras = [f"## Part {i}\n\nParagraph {i} with **bold**, `code` and a list:\n\n- one\n- two\n" for i in range(n)]
        return Reply(text="\n".join(paras) + "\n```python\nprint('done')\n```\n", chunk_size=16, delay_s=0.005)
    if "markdown sample" in text:
        return Reply(text=MARKDOWN_SAMPLE, chunk_size=6, delay_s=0.01)
    return Reply(text=f"You said: **{text.strip()[:200]}**\n\n- a list item\n- another item\n")


def summarise(content: Any) -> str:
    if isinstance(content, list):
        content = " ".join(str(c.get("text", c)) if isinstance(c, dict) else str(c) for c in content)
    try:
        data = json.loads(content)
        status = data.get("status")
        detail = data.get("stdout") or data.get("message") or data.get("error_message") or data.get("content") or ""
        return f"status {status}. {str(detail).strip()[:300]}"
    except (ValueError, TypeError, AttributeError):
        return str(content)[:300]


def chunks(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] if text else []
