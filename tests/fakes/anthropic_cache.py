"""The fake Anthropic server's prompt cache, as the API describes it.

A request's blocks are read in order (tools, system, messages). Each `cache_control` breakpoint writes the
prefix up to it, if that prefix is at least the model's minimum; a later request reads the longest written
prefix found at one of its breakpoints or up to 20 blocks before one (the API's look-back). Usage is then
reported the API's way: `cache_read_input_tokens` (the prefix read), `cache_creation_input_tokens` (from
there to the last breakpoint) and `input_tokens` (only what follows the last breakpoint).
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from tests.fakes.anthropic_rules import blocks, tokens

LOOKBACK = 20


def sequence(body: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """Every block of the request in cache order, with whether it carries a breakpoint."""
    out: list[tuple[dict[str, Any], bool]] = [(t, "cache_control" in t) for t in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str) and system:
        out.append(({"type": "text", "text": system}, False))
    elif isinstance(system, list):
        out += [(b, "cache_control" in b) for b in system]
    for m in body.get("messages") or []:
        out += [(dict(b, role=m.get("role")), "cache_control" in b) for b in blocks(m)]
    return out


class PromptCache:
    def __init__(self) -> None:
        self.entries: dict[str, int] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def usage(self, body: dict[str, Any], model: str, min_tokens: int) -> tuple[int, int, int]:
        """(input_tokens, cache_creation_input_tokens, cache_read_input_tokens) of this request."""
        seq = sequence(body)
        digest = hashlib.sha256(model.encode())
        hashes, cumulative, total = [], [], 0
        for block, _ in seq:
            digest.update(json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True).encode())
            hashes.append(digest.hexdigest())
            total += tokens(block)
            cumulative.append(total)
        marks = [i for i, (_, marked) in enumerate(seq) if marked]
        if not marks:
            return total, 0, 0
        with self._lock:
            read = self._longest_hit(marks, hashes, cumulative)
            last = marks[-1]
            if cumulative[last] < min_tokens:
                return total - read, 0, read
            for i in marks:
                if cumulative[i] >= min_tokens:
                    self.entries[hashes[i]] = cumulative[i]
        write = cumulative[last] - read
        return total - cumulative[last], write, read

    def _longest_hit(self, marks: list[int], hashes: list[str], cumulative: list[int]) -> int:
        best = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK), -1):
                if hashes[i] in self.entries:
                    best = max(best, cumulative[i])
                    break
        return best
