"""The models the fake Anthropic server serves, and what each accepts, as the Messages API decides it.

Known models are the fake's own names plus the installed SDK's model list (`types/model_param.py`), less
those already retired (`DEPRECATED_MODELS` entries past their end of life). What each accepts follows the
providers' model pages, written here by family and deliberately independent of LACA's own capability
profiles: a fake that read them could not catch them being wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tests.fakes.literals import literal_strings

RETIRED = {"claude-mythos-preview"}  # end of life 2026-06-30


@dataclass(frozen=True)
class FakeModel:
    name: str
    context_window: int = 200_000
    max_output: int = 64_000
    thinking: str = "none"  # none | budget | adaptive | always
    thinks_by_default: bool = False
    sampling: bool = False  # the API version the SDK sends refuses temperature / top_p / top_k
    min_cache_tokens: int = 1024  # a shorter prefix is not cached


FAKE = {
    "fake-claude": FakeModel("fake-claude"),
    "fake-model": FakeModel("fake-model"),
    "m": FakeModel("m"),  # the name the benchmarks send
    "fake-claude-sampling": FakeModel("fake-claude-sampling", sampling=True),
    "fake-small-context": FakeModel("fake-small-context", context_window=6000),
}


@lru_cache(maxsize=1)
def sdk_models() -> frozenset[str]:
    from anthropic.types.model_param import ModelParam

    return literal_strings(ModelParam)


def _family(name: str) -> FakeModel:
    if name.startswith(("claude-fable-", "claude-mythos-", "claude-opus-5-5")):
        return FakeModel(name, 1_000_000, 128_000, "always", True)
    if name.startswith(("claude-opus-5", "claude-sonnet-5", "claude-haiku-5")):
        return FakeModel(name, 1_000_000, 128_000, "adaptive", True,
                         min_cache_tokens=2048 if "haiku" in name else 1024)
    if name.startswith(("claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-4-6")):
        return FakeModel(name, 1_000_000, 128_000, "adaptive", False)
    return FakeModel(name, 200_000, 64_000, "budget", False,
                     min_cache_tokens=4096 if name.startswith(("claude-haiku-4-5", "claude-opus-4-5")) else 1024)


def get(name: str) -> FakeModel | None:
    if name in FAKE:
        return FAKE[name]
    if name in sdk_models() and name not in RETIRED:
        return _family(name)
    return None


def listed() -> list[str]:
    """What GET /v1/models answers: the fake's own models, then the real ones, newest names first."""
    return [n for n in FAKE if n != "m"] + sorted(sdk_models() - RETIRED, reverse=True)
