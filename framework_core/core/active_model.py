"""The provider and model in force for a conversation: its settings, capabilities, API key and adapter.

The adapter is made on first use (the warm-up thread and a request may race for it; a lock makes one of them
make it, for the provider in force) and dropped on a switch; the neutral history converts itself.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Mapping

from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.adapters.profiles import Capabilities
    from framework_core.config.models import FrameworkConfig, ProviderSettings
    from framework_core.dcm import DynamicContextManager
    from framework_core.lial_core import LLMAdapterInterface, Usage


class ActiveModel:
    """One conversation's provider and model."""

    def __init__(self, config: "FrameworkConfig", dcm: "DynamicContextManager",
                 env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self._dcm = dcm
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.name = config.llm_provider
        self._adapter: LLMAdapterInterface | None = None
        self._lock = threading.Lock()
        self.key_problem: ConfigError | None = None  # no key yet: the session opens; a message says what to set
        try:
            self.api_key = self._key_for(self.name)
        except ConfigError as exc:
            self.api_key, self.key_problem = None, exc

    @property
    def settings(self) -> "ProviderSettings":
        return self.config.provider(self.name)

    @property
    def caps(self) -> "Capabilities":
        """The active model's capabilities: its profile with the provider entry's overrides."""
        from framework_core.adapters.profiles import resolve

        return resolve(self.settings)

    @property
    def adapter(self) -> "LLMAdapterInterface":
        """The active provider's adapter, made on first use. Raises the key's ConfigError when there is none."""
        with self._lock:
            if self._adapter is None:
                from framework_core.adapters import create_adapter

                if self.key_problem is not None:
                    raise self.key_problem
                self._adapter = create_adapter(self.settings, self._dcm, self.api_key)
            return self._adapter

    @property
    def built(self) -> "LLMAdapterInterface | None":
        """The adapter if it has been made (the warm-up's work), else None."""
        return self._adapter

    def prepare(self) -> None:
        """Make the adapter and let it import its SDK and build its client; a switch meanwhile wins (the warmed
        adapter is left alone if it is no longer the one). Problems wait for the first real request."""
        if self.key_problem is not None:
            return
        try:
            adapter = self.adapter
            with self._lock:
                if adapter is self._adapter:
                    adapter.prepare()
        except Exception:
            pass  # the first real request reports problems properly

    def switch(self, name: str, model: str | None = None) -> None:
        """Switch provider (and optionally model). Raises ConfigError listing the valid names, or for a key."""
        self.config.provider(name)
        key = self._key_for(name)
        self.name, self.api_key, self.key_problem = name, key, None
        if model:
            self.config.llm_settings[name].model = model
        self.reset()

    def set_model(self, model: str) -> None:
        self.settings.model = model
        self.reset()

    def reset(self) -> None:
        """Drop the adapter: the next request makes one from the settings as they are now."""
        with self._lock:
            if self._adapter is not None:
                self._adapter.close()
            self._adapter = None

    def cost(self, usage: "Usage") -> float | None:
        """What `usage` cost at this model's prices, or None where they are unknown."""
        return self.caps.prices.cost(usage)

    def providers(self) -> list[str]:
        return sorted(self.config.llm_settings)

    def describe(self) -> str:
        from framework_core.adapters.profiles import describe

        return describe(self.caps)

    def server_models(self, wait_s: float = 0.0) -> list[str] | str | None:
        """The models the provider's server offers, an error message, or None while still fetching."""
        from framework_core.adapters.model_list import server_models

        settings = self.settings
        key = (self.name, f"{settings.type} {settings.base_url or ''}")
        return server_models(key, lambda: self.adapter, wait_s=wait_s)

    def _key_for(self, name: str) -> str | None:
        from framework_core.config.load import resolve_api_key

        return resolve_api_key(self.config, name, self.env)
