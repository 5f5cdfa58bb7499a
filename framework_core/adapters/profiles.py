"""Capability profiles: what each model can do, kept as data (`profiles.yaml`), and the effective
capabilities of one provider entry (its profile with the entry's own overrides applied).

Adapters ask `resolve(settings)` which token parameter to send, whether sampling parameters are
accepted, how to ask for thinking and effort, and how long a silent stream may last; the core asks it
for the context window and prices. An unknown model gets safe defaults for its wire API and a note.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from framework_core.config.models import ProviderSettings
    from framework_core.lial_core import Usage

MIN_THINKING_BUDGET = 1024  # the Messages API's smallest budget_tokens


@dataclass(frozen=True)
class Prices:
    """USD per million tokens. Missing cache prices follow the providers' usual multipliers."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None

    @property
    def known(self) -> bool:
        return self.input is not None and self.output is not None

    def read_rate(self) -> float | None:
        if self.cache_read is not None or self.input is None:
            return self.cache_read
        return self.input * 0.1

    def write_rate(self) -> float | None:
        if self.cache_write is not None or self.input is None:
            return self.cache_write
        return self.input * 1.25

    def cost(self, usage: "Usage") -> float | None:
        if not self.known:
            return None
        assert self.input is not None and self.output is not None
        return (usage.input_tokens * self.input + usage.output_tokens * self.output
                + usage.cache_read_tokens * (self.read_rate() or 0.0)
                + usage.cache_write_tokens * (self.write_rate() or 0.0)) / 1e6


@dataclass(frozen=True)
class ModelProfile:
    """One model's capabilities, as shipped in profiles.yaml (or the wire's defaults when unknown)."""

    model: str
    wire: str
    known: bool
    context_window: int
    max_output_tokens: int | None = None
    output_tokens: int | None = None
    token_parameter: str | None = None
    sampling: bool = True
    thinking: str = "none"
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None
    idle_timeout_s: float = 300.0
    images: bool = False  # takes images as input (a tool's images); False: they become text notes
    prices: Prices = field(default_factory=Prices)
    retires: str | None = None
    tool_mode: str | None = None  # native | generic; None: unknown (an unknown server is probed, then remembered)
    tool_choice_first: str = "auto"  # auto | required: the first request of a turn
    tool_choice_after_result: str = "auto"  # auto | answer: a request right after tool results
    small_model: bool = False  # a one-line brief, no optional tool parameters, a shorter system prompt


@dataclass(frozen=True)
class Capabilities:
    """What requests to one provider entry use: its model's profile with the entry's overrides."""

    profile: ModelProfile
    context_window: int
    output_tokens: int | None  # None: send no output limit (only for unknown OpenAI-compatible models)
    token_parameter: str | None
    temperature: float | None  # None when unset or not accepted by the model
    thinking: bool  # ask for thinking / reasoning (how depends on profile.thinking)
    effort: str | None
    idle_timeout_s: float
    prices: Prices
    caching: bool
    images: bool = False  # send a tool's images as image blocks (else as notes), decided per request
    notes: tuple[str, ...] = ()
    tool_mode: str = "auto"  # native | generic | auto (the profile does not say: probed and remembered)
    tool_choice_first: str = "auto"
    tool_choice_after_result: str = "auto"
    small_model: bool = False

    @property
    def thinking_budget(self) -> int:
        """For `budget` models: half the output limit, at least the API's minimum, below max_tokens."""
        limit = self.output_tokens or 2 * MIN_THINKING_BUDGET
        return max(MIN_THINKING_BUDGET, min(limit // 2, limit - 1))


# ---- the data ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    from pathlib import Path

    from framework_core.config.yaml_load import parse_yaml  # the one YAML reader: duplicate keys are errors here too

    text = resources.files("framework_core.adapters").joinpath("profiles.yaml").read_text(encoding="utf-8")
    data = parse_yaml(text, Path(__file__).with_name("profiles.yaml")).data
    by_name: dict[str, dict[str, Any]] = {}
    for name, entry in data["models"].items():
        by_name[name] = dict(entry, name=name)
        for alias in entry.get("aliases") or []:
            by_name[alias] = by_name[name]
    return {"defaults": data["defaults"], "models": by_name, "names": list(data["models"])}


def wire_of(api_type: str) -> str:
    """Profiles are per wire family: every OpenAI-style API reads the openai defaults."""
    return "anthropic" if api_type == "anthropic" else "openai"


def _build(model: str, wire: str, entry: dict[str, Any] | None) -> ModelProfile:
    merged = dict(_data()["defaults"][wire])
    merged.update(entry or {})
    price = merged.get("price") or {}
    return ModelProfile(
        model=model, wire=wire, known=entry is not None, context_window=int(merged["context_window"]),
        max_output_tokens=merged.get("max_output_tokens"), output_tokens=merged.get("output_tokens"),
        token_parameter=merged.get("token_parameter"), sampling=bool(merged.get("sampling", True)),
        thinking=merged.get("thinking", "none"), efforts=tuple(merged.get("efforts") or ()),
        default_effort=merged.get("default_effort"), idle_timeout_s=float(merged.get("idle_timeout_s", 300)),
        images=bool(merged.get("images", False)),
        prices=Prices(price.get("input"), price.get("output"), price.get("cache_read"), price.get("cache_write")),
        retires=merged.get("retires"), tool_mode=merged.get("tool_mode"),
        tool_choice_first=merged.get("tool_choice_first", "auto"),
        tool_choice_after_result=merged.get("tool_choice_after_result", "auto"),
        small_model=bool(merged.get("small_model", False)))


def lookup(model: str, api_type: str) -> ModelProfile:
    """The profile of `model` on this API type; an unknown model (or one of another wire) gets the defaults."""
    wire = wire_of(api_type)
    entry = _data()["models"].get(model)
    if entry is not None and entry.get("wire", wire) != wire:
        entry = None
    return _build(model, wire, entry)


def known_models(api_type: str) -> list[str]:
    """Models with a profile for this API type (aliases left out), in the order of the data file."""
    wire = wire_of(api_type)
    return [name for name in _data()["names"] if _data()["models"][name].get("wire") == wire]


# ---- one provider entry ----------------------------------------------------------------------------

def resolve(settings: "ProviderSettings") -> Capabilities:
    """The profile of the entry's model with the entry's overrides; `notes` says what was adjusted."""
    profile = lookup(settings.model, settings.type)
    notes: list[str] = []
    context = settings.context_window or profile.context_window
    if not profile.known and settings.model:
        source = "as its llm_settings entry says" if settings.context_window else "a safe default"
        notes.append(f"No capability profile for model '{settings.model}': using safe defaults for the "
                     f"{profile.wire} API (context {context:,} tokens, {source}); set context_window, "
                     "max_tokens, prices and images (whether it takes images) in its llm_settings entry if "
                     "they differ.")
    if profile.retires:
        notes.append(f"Model '{settings.model}' reaches end of life on {profile.retires}: pick a current one "
                     "with /model.")
    output = _output_tokens(settings, profile, notes)
    token_parameter = None
    if profile.wire == "anthropic":
        token_parameter = "max_tokens"
    elif output is not None:
        token_parameter = settings.token_parameter or profile.token_parameter or "max_tokens"
    return Capabilities(
        profile=profile, context_window=context,
        output_tokens=output, token_parameter=token_parameter,
        temperature=_temperature(settings, profile, notes), thinking=_thinking(settings, profile, notes),
        effort=_effort(settings, profile, notes),
        idle_timeout_s=settings.request_timeout_s or profile.idle_timeout_s,
        prices=_prices(settings, profile), caching=settings.prompt_caching,
        images=profile.images if settings.images is None else settings.images, notes=tuple(notes),
        tool_mode=_tool_mode(settings, profile),
        tool_choice_first=settings.tool_choice_first or profile.tool_choice_first,
        tool_choice_after_result=settings.tool_choice_after_result or profile.tool_choice_after_result,
        small_model=profile.small_model if settings.small_model is None else settings.small_model)


def _tool_mode(settings: "ProviderSettings", profile: ModelProfile) -> str:
    if profile.wire != "openai" or settings.type != "openai":
        return "native"  # generic tool mode is for Chat Completions servers
    if settings.tool_mode != "auto":
        return settings.tool_mode
    return profile.tool_mode or ("native" if profile.known else "auto")


def _output_tokens(settings: "ProviderSettings", profile: ModelProfile, notes: list[str]) -> int | None:
    wanted = settings.max_tokens or profile.output_tokens
    cap = profile.max_output_tokens
    if wanted is not None and cap is not None and wanted > cap:
        notes.append(f"max_tokens {wanted:,} is above what {profile.model} allows; using {cap:,}.")
        return cap
    return wanted


def _temperature(settings: "ProviderSettings", profile: ModelProfile, notes: list[str]) -> float | None:
    if settings.temperature is None:
        return None
    if not profile.sampling:
        notes.append(f"temperature is not sent: {profile.model or 'this model'} does not accept sampling "
                     "parameters.")
        return None
    return settings.temperature


def _thinking(settings: "ProviderSettings", profile: ModelProfile, notes: list[str]) -> bool:
    mode, wanted = profile.thinking, settings.thinking
    if wanted == "auto":
        return mode in ("adaptive", "always")
    if wanted == "on" and mode == "none":
        notes.append(f"thinking: on is ignored: no profile says how {profile.model} thinks.")
        return False
    if wanted == "off" and mode == "always":
        notes.append(f"thinking: off is ignored: {profile.model} always thinks (lower reasoning_effort instead).")
        return True
    return wanted == "on"


def _effort(settings: "ProviderSettings", profile: ModelProfile, notes: list[str]) -> str | None:
    effort = settings.reasoning_effort
    if effort is None:
        return None
    if profile.efforts and effort not in profile.efforts:
        notes.append(f"reasoning_effort '{effort}' is not sent: {profile.model} accepts "
                     f"{', '.join(profile.efforts)}.")
        return None
    if not profile.efforts and profile.known:
        notes.append(f"reasoning_effort is not sent: {profile.model} has no effort setting.")
        return None
    return effort


def _prices(settings: "ProviderSettings", profile: ModelProfile) -> Prices:
    p = profile.prices

    def pick(own: float | None, shipped: float | None) -> float | None:
        return own if own is not None else shipped

    return Prices(pick(settings.price_input_per_mtok, p.input), pick(settings.price_output_per_mtok, p.output),
                  pick(settings.price_cache_read_per_mtok, p.cache_read),
                  pick(settings.price_cache_write_per_mtok, p.cache_write))


def describe(caps: Capabilities) -> str:
    """One line for /model: what the active model's profile (with the entry's overrides) says."""
    p = caps.profile
    parts = [f"context {caps.context_window:,}"]
    if caps.output_tokens:
        raised = p.max_output_tokens and p.max_output_tokens != caps.output_tokens
        cap = f" (max {p.max_output_tokens:,})" if raised else ""
        parts.append(f"output limit {caps.output_tokens:,}{cap}")
    else:
        parts.append("output limit: the server's")
    if p.thinking != "none":
        parts.append(f"thinking {p.thinking} ({'on' if caps.thinking else 'off'}"
                     + (f", effort {caps.effort or p.default_effort}" if p.efforts else "") + ")")
    parts.append("takes images" if caps.images else "text only (images become notes)")
    if caps.prices.known:
        parts.append(f"${caps.prices.input:g}/${caps.prices.output:g} per M (cache ${caps.prices.read_rate():g} read)")
    head = p.model if p.known else f"{p.model} (no profile: safe defaults)"
    return f"{head}: " + " · ".join(parts)
