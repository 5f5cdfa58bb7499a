"""The one estimator: base64 sizes without decoding, and token estimates that compaction and the context fit share."""

from __future__ import annotations

import base64

from framework_core.core.context_fit import fit
from framework_core.estimate import base64_size, messages_tokens
from framework_core.wording import size_words
from framework_core.lial_core import Message, ToolResult


def test_base64_size_is_the_decoded_length_for_every_padding() -> None:
    for n in range(0, 12):
        assert base64_size(base64.b64encode(b"x" * n).decode()) == n
    assert base64_size(None) == 0


def test_sizes_read_as_words() -> None:
    assert [size_words(n) for n in (999, 41_300, 2_000_000)] == ["999 bytes", "41.3 KB", "2.0 MB"]


def test_the_context_fit_cuts_nothing_while_the_shared_estimate_says_the_history_fits() -> None:
    result = Message.tool_result(ToolResult("c1", "readFile", "success", {"content": "z" * 40_000}))
    history = [Message("user", "read it"), result, Message("assistant", "done")]
    assert fit(history, messages_tokens(history)).messages == history
    assert fit(history, messages_tokens(history) - 1).shortened == 1
