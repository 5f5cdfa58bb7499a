"""Retry a streamed request with exponential backoff, honouring retry-after, while no text has been shown."""

from __future__ import annotations

import random
import time
from typing import Callable, Iterator

from framework_core.config import RetrySettings
from framework_core.errors import ProviderError, StreamCutError
from framework_core.lial_core import StreamEvent, TextDelta

OnRetry = Callable[[int, int, float, str], None]


def backoff_delay(attempt: int, settings: RetrySettings, retry_after: float | None) -> float:
    """Delay before attempt `attempt + 1` (attempt counts from 1)."""
    if retry_after is not None:
        return min(retry_after, settings.max_delay_s)
    base = settings.initial_delay_s * (2 ** (attempt - 1))
    return min(base * (1 + random.uniform(0, 0.1)), settings.max_delay_s)


def stream_with_retry(make_stream: Callable[[], Iterator[StreamEvent]], settings: RetrySettings, on_retry: OnRetry,
                      sleep: Callable[[float], None] = time.sleep) -> Iterator[StreamEvent]:
    attempt = 1
    while True:
        shown = False
        try:
            for event in make_stream():
                if isinstance(event, TextDelta) and event.text:
                    shown = True
                yield event
            return
        except ProviderError as exc:
            if shown or not exc.retryable or attempt >= settings.max_attempts:
                if isinstance(exc, StreamCutError) or shown or not exc.retryable:
                    raise
                raise type(exc)(f"{exc} (gave up after {attempt} attempts)", status=exc.status) if not isinstance(
                    exc, StreamCutError) else exc
            delay = backoff_delay(attempt, settings, exc.retry_after)
            on_retry(attempt, settings.max_attempts, delay, str(exc))
            sleep(delay)
            attempt += 1
