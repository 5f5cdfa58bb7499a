"""Retry a streamed request with exponential backoff, honouring retry-after, while nothing has been produced.

Only failures before the model produced any output are retried blindly: a retry after text, reasoning or a
tool call began would bill that output again (and show it twice). What is retryable at all is the error's
own say (`ProviderError.retryable`): an exhausted quota or a stream that went silent mid-reply is not.
"""

from __future__ import annotations

import random
import time
from typing import Callable, Iterator

from framework_core.config.models import RetrySettings
from framework_core.errors import ProviderError, StreamCutError
from framework_core.lial_core import ReasoningDelta, StreamEvent, TextDelta, ToolCallStart

OnRetry = Callable[[int, int, float, str], None]


def backoff_delay(attempt: int, settings: RetrySettings, retry_after: float | None) -> float:
    """Delay before attempt `attempt + 1` (attempt counts from 1)."""
    if retry_after is not None:
        return min(retry_after, settings.max_delay_s)
    base = settings.initial_delay_s * (2 ** (attempt - 1))
    return min(base * (1 + random.uniform(0, 0.1)), settings.max_delay_s)


def is_output(event: StreamEvent) -> bool:
    """An event that means the model has produced (and is billing) output."""
    if isinstance(event, (TextDelta, ReasoningDelta)):
        return bool(event.text)
    return isinstance(event, ToolCallStart)


def stream_with_retry(make_stream: Callable[[], Iterator[StreamEvent]], settings: RetrySettings, on_retry: OnRetry,
                      sleep: Callable[[float], None] = time.sleep) -> Iterator[StreamEvent]:
    attempt = 1
    while True:
        produced = False
        try:
            for event in make_stream():
                produced = produced or is_output(event)
                yield event
            return
        except ProviderError as exc:
            if produced or not exc.retryable:
                raise
            if attempt >= settings.max_attempts:
                if isinstance(exc, StreamCutError):
                    raise
                raise type(exc)(f"{exc} (gave up after {attempt} attempts)", status=exc.status) from None
            delay = backoff_delay(attempt, settings, exc.retry_after)
            on_retry(attempt, settings.max_attempts, delay, str(exc))
            sleep(delay)
            attempt += 1
