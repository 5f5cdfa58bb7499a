"""The models a provider's server offers (`GET /models`), fetched once per provider in the background, for
/model and its completion (local servers name their models in ways no profile can know)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from framework_core.core.agent import Agent

LIST_TIMEOUT_S = 10.0
MAX_MODELS = 300

_lock = threading.Lock()
_results: dict[tuple[str, str], list[str] | str] = {}  # a list of model ids, or why there is none
_running: dict[tuple[str, str], threading.Thread] = {}


def _key(agent: "Agent") -> tuple[str, str]:
    return agent.provider_name, f"{agent.provider.type} {agent.provider.base_url or ''}"


def _fetch(agent: "Agent", key: tuple[str, str]) -> None:
    try:
        result: list[str] | str = agent.adapter.list_models(LIST_TIMEOUT_S, MAX_MODELS)
    except Exception as exc:  # shown as the reason, never raised into the prompt
        result = str(exc)
    with _lock:
        _results[key] = result
        _running.pop(key, None)


def server_models(agent: "Agent", wait_s: float = 0.0) -> list[str] | str | None:
    """The server's model ids, or an error message; None while the first fetch is still under way."""
    key = _key(agent)
    with _lock:
        if key in _results:
            return _results[key]
        thread = _running.get(key)
        if thread is None:
            thread = threading.Thread(target=_fetch, args=(agent, key), name="laca-models", daemon=True)
            _running[key] = thread
            thread.start()
    thread.join(wait_s)
    with _lock:
        return _results.get(key)


def forget(agent: "Agent") -> None:
    """Fetch again next time (after a provider's settings changed)."""
    with _lock:
        _results.pop(_key(agent), None)
