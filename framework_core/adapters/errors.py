"""Map SDK exceptions (openai / anthropic share a shape) to LACA's error types. Keys never reach messages."""

from __future__ import annotations

import re
from typing import Any

from framework_core.errors import (AuthError, BadRequestError, ConnectionFailed, ProviderError, RateLimitError,
                                   ServerError)

KEYLIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|[A-Za-z0-9_\-]{32,})")


def retry_after_seconds(headers: Any) -> float | None:
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) / divisor)
            except ValueError:
                continue
    return None


def api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    msg = None
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else None
    text = str(msg or getattr(exc, "message", "") or exc)
    return KEYLIKE.sub("***", text)[:600]


RETRYABLE_TYPES = {"rate_limit_error": 429, "rate_limit_exceeded": 429, "overloaded_error": 529,
                   "api_error": 500, "server_error": 500, "internal_error": 500, "timeout_error": 504}


def error_type(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return err.get("type") or err.get("code")
    return None


def map_sdk_error(exc: BaseException, provider: str, key_var: str | None) -> ProviderError:
    """Turn any SDK exception into a ProviderError subclass with a message that says what to do."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    kind = error_type(exc)
    if kind in RETRYABLE_TYPES and (status is None or status < 400):
        status = RETRYABLE_TYPES[kind]  # an error event inside a 200 stream: judge it by its type
    elif kind and status is not None and status < 400:
        status = None  # any other error event inside a 200 stream is named by its type, never "HTTP 200"
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if name in ("APITimeoutError",):
        return ConnectionFailed(f"{provider}: the request timed out (no data within the timeout)")
    if status is None and kind:
        return BadRequestError(f"{provider}: the API reported an error ({kind}): {api_message(exc)}")
    if name in ("APIConnectionError",) or status is None:
        if name.endswith("Error") and hasattr(exc, "request") and status is None:
            return ConnectionFailed(f"{provider}: cannot reach the API ({api_message(exc)}). Check the network and base_url")
        return ConnectionFailed(f"{provider}: {name}: {api_message(exc)}")
    detail = api_message(exc)
    if status == 429:
        return RateLimitError(f"{provider}: rate limited (HTTP 429): {detail}", status=status,
                              retry_after=retry_after_seconds(headers))
    if status in (401, 403):
        hint = f" Check the key in ${key_var}." if key_var else " Check the server's authentication settings."
        return AuthError(f"{provider}: authentication failed (HTTP {status}): {detail}.{hint}", status=status)
    if status >= 500 or status in (408, 409, 529):
        what = "overloaded" if status == 529 else "server error"
        return ServerError(f"{provider}: {what} (HTTP {status}): {detail}", status=status,
                           retry_after=retry_after_seconds(headers))
    if status == 404:
        return BadRequestError(f"{provider}: not found (HTTP 404): {detail}. Check the model name and base_url", status=status)
    return BadRequestError(f"{provider}: request rejected (HTTP {status}): {detail}", status=status)
