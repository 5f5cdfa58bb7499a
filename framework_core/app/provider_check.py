"""`laca doctor`'s provider check: is the configured provider usable, and if not, what exactly is wrong.

Each step is said on one line with what to do when it fails, and a failed step stops the ones that need it:
the provider and its key (never printed), the address, whether the server answers (`GET /models`), whether the
model is among those it lists, which tool mode LACA uses and whether a tool call makes the round trip in it
(`app/doctor_tools.py`), and, for a
server on this machine or the local network, whether the context window it claims is really served: local
servers (Ollama, llama.cpp, LM Studio) silently cut a prompt to their own context size (often 2,048 or 4,096
tokens), which the usage they report shows.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlparse

if TYPE_CHECKING:
    from framework_core.config.load import LoadedConfig
    from framework_core.config.models import ProviderSettings
    from framework_core.lial_core import LLMAdapterInterface, LLMResponse

WINDOW_PROBE_TOKENS = 6_000  # a prompt this long (or 3/4 of a smaller window) shows a server that cuts at 4,096
SDK_BASE_URL = {"openai": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                "openai-responses": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                "anthropic": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com")}


@dataclass
class Check:
    ok: bool
    text: str


def run_provider_check(loaded: "LoadedConfig", out: TextIO, *, timeout_s: float = 20.0) -> int:
    """Print the checks; 0 when the provider works end to end, 1 when a step failed."""
    checks = list(_checks(loaded, timeout_s))
    for check in checks:
        out.write(f"  {'✓' if check.ok else '✗'} {check.text}\n")
    return 0 if all(c.ok for c in checks) else 1


def _checks(loaded: "LoadedConfig", timeout_s: float):  # -> Iterator[Check]
    import os

    from framework_core.config.load import resolve_api_key
    from framework_core.errors import LacaError

    cfg = loaded.config
    name = cfg.llm_provider
    settings = cfg.llm_settings.get(name)
    if settings is None:
        yield Check(False, f"provider '{name}' is not among llm_settings ({', '.join(cfg.llm_settings)}): choose "
                           "one with --provider or llm_provider")
        return
    yield Check(True, f"provider {name}: {settings.type} wire, model {settings.model}")
    var = cfg.api_key_env(name)
    try:
        key = resolve_api_key(cfg, name)
    except LacaError as exc:
        yield Check(False, f"API key: {exc}")
        return
    yield Check(True, f"API key: {'read from ' + var if var else 'none needed (no api_key_env_var)'}")
    env_var, default = SDK_BASE_URL.get(settings.type, ("", ""))
    url = settings.base_url or os.environ.get(env_var) or default
    origin = "llm_settings" if settings.base_url else env_var if os.environ.get(env_var) else "the SDK's default"
    yield Check(True, f"address: {url} (from {origin})")
    from framework_core.adapters import create_adapter

    adapter = create_adapter(settings, None, key)
    try:
        yield from _server_checks(adapter, settings, url, timeout_s)
    finally:
        close = getattr(adapter, "close", None)
        if close is not None:
            close()


def _server_checks(adapter: "LLMAdapterInterface", settings: "ProviderSettings", url: str, timeout_s: float):
    from framework_core.errors import LacaError

    try:
        models = adapter.list_models(timeout_s, 500)  # type: ignore[attr-defined]
    except LacaError as exc:
        yield Check(False, f"the server does not answer GET /models: {exc}")
        return
    yield Check(True, f"the server answers ({len(models)} models listed)")
    if models and settings.model not in models:
        near = [m for m in models if settings.model.split(":")[0] in m][:5] or models[:5]
        yield Check(False, f"model {settings.model} is not listed by the server; it lists {', '.join(near)}"
                           f"{' …' if len(models) > 5 else ''}: set `model:` (or /model) to one of them")
        return
    if models:
        yield Check(True, f"model {settings.model} is listed")
    from framework_core.app.doctor_tools import served_window, tool_checks

    try:
        for ok, text in tool_checks(adapter):  # which tool mode, and the round trip in it
            yield Check(ok, text)
    except LacaError as exc:
        yield Check(False, f"a request with a tool failed: {exc}")
        return
    if _is_local(url):
        window = getattr(getattr(adapter, "caps", None), "context_window", None) or settings.context_window
        try:
            served = served_window(adapter, window)  # llama.cpp says what it serves (/props)
            yield Check(*served) if served else _window_check(adapter, window)
        except LacaError as exc:
            yield Check(False, f"a long prompt failed: {exc}")


def _window_check(adapter: "LLMAdapterInterface", window: int | None) -> Check:
    """Send a long prompt and compare the prompt tokens the server counted with what was sent."""
    from framework_core.lial_core import Message

    target = min(WINDOW_PROBE_TOKENS, int(window * 3 / 4)) if window else WINDOW_PROBE_TOKENS
    words = " ".join(f"w{n % 97}" for n in range(target))  # about one token a word on common tokenizers
    reply = _reply(adapter, [Message("user", words + "\nReply with the word ok.")], [])
    counted = reply.usage.input_tokens + reply.usage.cache_read_tokens + reply.usage.cache_write_tokens
    if counted and counted < 1024:
        return Check(False, f"context window: the server counted only {counted:,} prompt tokens of about {target:,} "
                            "sent: either it cuts prompts to a tiny context or it does not report usage; check its "
                            "context size (Ollama: num_ctx; llama.cpp: -c)")
    if counted and counted < target * 0.6:
        return Check(False, f"context window: the server counted {counted:,} prompt tokens of about {target:,} "
                            "sent: it cuts prompts to its own context size. Raise it on the server (Ollama: "
                            "num_ctx / OLLAMA_CONTEXT_LENGTH; llama.cpp: -c; LM Studio: the model's context "
                            f"length) or set context_window: {counted} for this model")
    said = f"{window:,}" if window else "unknown"
    return Check(True, f"context window: a {target:,}-token prompt arrived whole ({counted:,} counted; "
                       f"configured window {said})")


def _reply(adapter: "LLMAdapterInterface", messages: list[Any], tools: list[Any]) -> "LLMResponse":
    from framework_core.lial_core import StreamDone

    for event in adapter.stream(messages, tools, "You are a connectivity check. Be brief."):
        if isinstance(event, StreamDone):
            return event.response
    from framework_core.errors import ProviderError

    raise ProviderError("the reply stream ended without a final event")


def _is_local(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host in ("localhost", "host.docker.internal") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
