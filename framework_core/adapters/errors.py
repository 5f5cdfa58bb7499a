"""Map SDK exceptions (openai / anthropic share a shape) to LACA's error types. Keys never reach messages.

What may be retried blindly is decided here and in `retry.py`: a failure before the API produced anything
(connection refused, 429, 5xx, overload) costs nothing to retry; a stream that went silent after the model
started is not retried (a reasoning model was working and is billed for it), nor is an exhausted quota.
"""

from __future__ import annotations

import re
from typing import Any

from framework_core.errors import (AuthError, BadRequestError, ConnectionFailed, ProviderError, RateLimitError,
                                   ServerError)

KEYLIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|[A-Za-z0-9_\-]{32,})")
QUOTA_TYPES = {"insufficient_quota", "billing_error", "billing_hard_limit_reached"}
QUOTA_TEXT = re.compile(r"credit balance is too low|exceeded your current quota|insufficient.quota", re.I)
CONTEXT_TEXT = re.compile(
    r"prompt is too long|context.length|context window|maximum context|exceeds? (the )?(available )?context"
    r"|input length and `?max_tokens`? exceed|too many tokens|exceed_context_size|request_too_large", re.I)


class QuotaExceeded(RateLimitError):
    """The account has no credit or quota left: waiting does not help, so it is never retried."""

    retryable = False


class ContextTooLong(BadRequestError):
    """The request does not fit the model's context window: the core compacts the history and tries once more."""


class StalledReply(ConnectionFailed):
    """The stream went silent after the model started: it may have been working (and billing) all along, so
    the request is not repeated blindly."""

    retryable = False


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
            return err.get("code") if err.get("code") in QUOTA_TYPES else (err.get("type") or err.get("code"))
    return None


def map_sdk_error(exc: BaseException, provider: str, key_var: str | None, *, started: bool = False,
                  idle_timeout_s: float | None = None) -> ProviderError:
    """Turn any SDK exception into a ProviderError subclass with a message that says what to do.

    `started`: the response had begun (the stream was open) when the failure came."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    kind = error_type(exc)
    if kind in RETRYABLE_TYPES and (status is None or status < 400):
        status = RETRYABLE_TYPES[kind]  # an error event inside a 200 stream: judge it by its type
    elif kind and status is not None and status < 400:
        status = None  # any other error event inside a 200 stream is named by its type, never "HTTP 200"
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if name == "APITimeoutError" or name.endswith("Timeout"):  # the SDK's, or httpx's read timeout mid-stream
        return _timeout(provider, started, idle_timeout_s)
    detail = api_message(exc)
    if kind in QUOTA_TYPES or QUOTA_TEXT.search(detail):
        return QuotaExceeded(f"{provider}: the account's quota or credit is used up ({kind or 'HTTP ' + str(status)}): "
                             f"{detail}. Add credit or raise the limit in the provider's console; not retried.",
                             status=status)
    if status is None and kind:
        return BadRequestError(f"{provider}: the API reported an error ({kind}): {detail}")
    if name in ("APIConnectionError",) or status is None:
        if name.endswith("Error") and hasattr(exc, "request") and status is None:
            return ConnectionFailed(f"{provider}: cannot reach the API ({detail}). Check the network and base_url")
        return ConnectionFailed(f"{provider}: {name}: {detail}")
    if status in (400, 413) and CONTEXT_TEXT.search(f"{kind or ''} {detail}"):
        return ContextTooLong(f"{provider}: the conversation is too long for the model's context window: {detail}",
                              status=status)
    return _by_status(provider, status, detail, headers, key_var)


def _timeout(provider: str, started: bool, idle_timeout_s: float | None) -> ProviderError:
    wait = f"{idle_timeout_s:g} s" if idle_timeout_s else "the timeout"
    if started:
        return StalledReply(f"{provider}: the reply stopped arriving (no data for {wait}); it was not retried, since "
                            "the model may have been working and billing. If the model thinks longer than that, "
                            "raise request_timeout_s for this provider")
    return ConnectionFailed(f"{provider}: the request timed out (no answer within {wait})")


def _by_status(provider: str, status: int, detail: str, headers: Any, key_var: str | None) -> ProviderError:
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
        return BadRequestError(f"{provider}: not found (HTTP {status}): {detail}. Check the model name (/model "
                               "lists the server's models) and base_url", status=status)
    return BadRequestError(f"{provider}: request rejected (HTTP {status}): {detail}", status=status)
