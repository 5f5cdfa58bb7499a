"""Adapters, one per wire API, created lazily by name so the SDKs load only when needed."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.config.models import ProviderSettings
    from framework_core.dcm import DynamicContextManager
    from framework_core.lial_core import LLMAdapterInterface

REGISTRY = {
    "openai": ("framework_core.adapters.openai_adapter", "OpenAIChatAdapter"),
    "openai-responses": ("framework_core.adapters.openai_responses", "OpenAIResponsesAdapter"),
    "anthropic": ("framework_core.adapters.anthropic_adapter", "AnthropicMessagesAdapter"),
}


def create_adapter(settings: "ProviderSettings", dcm: "DynamicContextManager | None",
                   api_key: str | None) -> "LLMAdapterInterface":
    try:
        module, name = REGISTRY[settings.type]
    except KeyError:
        raise ConfigError(f"unknown wire API type '{settings.type}'. Valid types: {', '.join(REGISTRY)}") from None
    cls = getattr(importlib.import_module(module), name)
    return cls(settings, dcm, api_key=api_key)
