"""The exception hierarchy. User-facing errors say what to fix; tool errors become results for the model."""

from __future__ import annotations

from typing import Any


class LacaError(Exception):
    """Base class. `str(err)` is a complete sentence meant for the user."""

    exit_code = 1


class ConfigError(LacaError):
    """Bad or missing configuration: names the file, line and key where known."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        where = ""
        if path:
            where = f"{path}" + (f", line {line}" if line else "")
            where += f" (key '{key}')" if key else ""
            where += ": "
        elif key:
            where = f"config key '{key}': "
        super().__init__(where + message)
        self.path, self.line, self.key = path, line, key


class MissingApiKeyError(ConfigError):
    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(
            f"No API key for provider '{provider}'. Set it with:  export {env_var}=...  "
            f"(or pick another provider with --provider NAME)"
        )
        self.env_var = env_var


class ProviderError(LacaError):
    """The LLM API failed. `retryable` says whether waiting and trying again may help."""

    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class RateLimitError(ProviderError):
    retryable = True


class ServerError(ProviderError):
    retryable = True


class ConnectionFailed(ProviderError):
    retryable = True


class AuthError(ProviderError):
    pass


class BadRequestError(ProviderError):
    pass


class StreamCutError(ProviderError):
    """The stream ended before the API's final event. `partial` holds what arrived."""

    retryable = True

    def __init__(self, message: str, partial: Any = None) -> None:
        super().__init__(message)
        self.partial = partial


class ToolError(LacaError):
    """A tool could not run; becomes an `error` ToolResult the model can read."""

    def __init__(self, message: str, *, details: str | None = None, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details
        self.data = dict(data or {})  # more of the result, e.g. what a command printed before it was stopped


class ToolArgumentError(ToolError):
    """The model's arguments do not fit the tool's schema (tools/arguments.py) or a check no schema can say
    (a path outside the workspace); the tool did not run."""
