"""The models a provider's server offers (`GET /models`), fetched once per provider in the background, for
/model and its completion (local servers name their models in ways no profile can know)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Protocol, runtime_checkable

if TYPE_CHECKING:
    from framework_core.lial_core import LLMAdapterInterface

#: Which server a list belongs to: the provider's name, and its wire type and base URL.
ServerKey = tuple[str, str]

LIST_TIMEOUT_S = 10.0
MAX_MODELS = 300

_lock = threading.Lock()
_results: dict[ServerKey, list[str] | str] = {}  # a list of model ids, or why there is none
_running: dict[ServerKey, threading.Thread] = {}


@runtime_checkable
class ListsModels(Protocol):
    """An adapter that can ask its server for the models it offers (the SDK adapters can)."""

    def list_models(self, timeout_s: float, limit: int) -> list[str]: ...


def _fetch(adapter: "Callable[[], LLMAdapterInterface]", key: ServerKey) -> None:
    try:
        made = adapter()
        result: list[str] | str = (made.list_models(LIST_TIMEOUT_S, MAX_MODELS) if isinstance(made, ListsModels)
                                   else f"{type(made).__name__} cannot list its server's models")
    except Exception as exc:  # shown as the reason, never raised into the prompt
        result = str(exc)
    with _lock:
        _results[key] = result
        _running.pop(key, None)


def server_models(key: ServerKey, adapter: "Callable[[], LLMAdapterInterface]",
                  wait_s: float = 0.0) -> list[str] | str | None:
    """The server's model ids, or an error message; None while the first fetch is still under way. `adapter`
    gives the provider's adapter (created on first use, off the caller's thread)."""
    with _lock:
        if key in _results:
            return _results[key]
        thread = _running.get(key)
        if thread is None:
            thread = threading.Thread(target=_fetch, args=(adapter, key), name="laca-models", daemon=True)
            _running[key] = thread
            thread.start()
    thread.join(wait_s)
    with _lock:
        return _results.get(key)

