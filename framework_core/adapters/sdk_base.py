"""What the SDK adapters share: a lazily created client with our timeouts, no SDK retries, and cleanup; and
the effective capabilities of the configured model (`caps`, from its profile and the entry's overrides)."""

from __future__ import annotations

import importlib
from typing import Any

from framework_core.adapters.profiles import Capabilities, resolve
from framework_core.lial_core import LLMAdapterInterface

PLACEHOLDER_KEY = "not-needed"  # local servers take any key; the SDKs insist on one


class SDKAdapter(LLMAdapterInterface):
    #: module and client class of the official SDK, e.g. ("openai", "OpenAI")
    sdk: tuple[str, str] = ("", "")
    #: request options `post_stream` gives the SDK's request path (the openai SDK's auth scheme; none for anthropic's)
    request_options: dict[str, Any] = {"security": {"bearer_auth": True}}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._client: Any = None
        self.caps: Capabilities = resolve(self.config)

    @property
    def client(self) -> Any:
        if self._client is None:
            import httpx2

            module, cls = self.sdk
            # The read timeout is the longest silence allowed between two pieces of a streamed reply:
            # an idle timeout, sized by the profile for models that think before they write.
            idle = self.caps.idle_timeout_s
            self._client = getattr(importlib.import_module(module), cls)(
                api_key=self._api_key or PLACEHOLDER_KEY, base_url=self.config.base_url, max_retries=0,
                timeout=httpx2.Timeout(idle, connect=min(10.0, idle)),
                default_headers=self.config.extra_headers or None)
        return self._client

    def post_stream(self, path: str, body: dict[str, Any], cast_to: Any, stream_cls: Any) -> Any:
        """Send a body we built ourselves through the SDK's own request path (its auth, timeouts, streaming
        and error types) without the typed transform its `create` methods run over every request: that
        transform walks every item of the history each time, so a long session paid more per call the
        longer it grew. `extra_body` keys are merged into the body, as the SDK does."""
        body = dict(body)
        options: dict[str, Any] = dict(self.request_options)
        extra = body.pop("extra_body", None)
        if extra:
            options["extra_json"] = extra
        return self.client.post(path, cast_to=cast_to, body=body, options=options, stream=True,
                                stream_cls=stream_cls)

    def prepare(self) -> None:
        self.client  # noqa: B018 - building the client imports the SDK

    def list_models(self, timeout_s: float, limit: int) -> list[str]:
        """The ids of the models the server offers (`GET /models`), as it lists them."""
        from framework_core.adapters.errors import map_sdk_error

        try:
            out: list[str] = []
            for model in self.client.with_options(timeout=timeout_s).models.list():
                out.append(model.id)
                if len(out) >= limit:
                    break
            return out
        except Exception as exc:
            if type(exc).__module__.startswith(("openai", "anthropic", "httpx", "httpcore")):
                raise map_sdk_error(exc, f"{self.wire_api} API", self.config.api_key_env_var) from None
            raise

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
