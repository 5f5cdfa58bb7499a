"""Capability profiles: shipped data for current models, safe defaults for unknown ones, entry overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from framework_core.adapters.profiles import known_models, lookup, resolve
from framework_core.config.models import ProviderSettings
from framework_core.lial_core import Usage
from tests.fakes.literals import literal_strings

ROOT = Path(__file__).resolve().parents[2]


def literals(alias: object) -> set[str]:
    return set(literal_strings(alias))


def sdk_names() -> dict[str, set[str]]:
    from anthropic.types.model_param import ModelParam
    from openai.types.shared.chat_model import ChatModel
    from openai.types.shared.responses_model import ResponsesModel

    return {"anthropic": literals(ModelParam), "openai": literals(ChatModel) | literals(ResponsesModel)}


def test_every_shipped_anthropic_and_openai_profile_names_a_model_the_sdk_knows() -> None:
    from anthropic._data import DEPRECATED_MODELS

    names = sdk_names()
    for wire in ("anthropic", "openai"):
        for model in known_models(wire):
            if model.startswith("gemini-"):
                continue  # served through Gemini's OpenAI-compatible endpoint, not in the OpenAI SDK's list
            if lookup(model, wire).small_model:
                continue  # a small local model (llama.cpp, Ollama): no vendor's SDK lists it
            assert model in names[wire], f"{model} is not in the installed {wire} SDK's model list"
    retiring = [m for m in known_models("anthropic") if m in DEPRECATED_MODELS]
    assert all(lookup(m, "anthropic").retires for m in retiring), "a deprecated model's profile must say so"


def test_the_presets_name_current_models_with_profiles() -> None:
    data = yaml.safe_load((ROOT / "framework_config.yaml").read_text())
    from anthropic._data import DEPRECATED_MODELS

    for name in ("anthropic", "openai", "gemini"):
        entry = data["llm_settings"][name]
        settings = ProviderSettings(**entry)
        for model in [settings.model, *settings.models]:
            profile = lookup(model, settings.type)
            assert profile.known and not profile.retires, f"preset {name} names {model} without a current profile"
            assert model not in DEPRECATED_MODELS


def test_known_model_profile_drives_limits_thinking_and_prices() -> None:
    caps = resolve(ProviderSettings(type="anthropic", model="claude-sonnet-5-5", temperature=0.3))
    assert caps.context_window == 1_000_000 and caps.output_tokens == 32_000 and caps.token_parameter == "max_tokens"
    assert caps.temperature is None and any("does not accept sampling" in n for n in caps.notes)
    assert caps.thinking and caps.profile.thinking == "adaptive" and caps.idle_timeout_s >= 600
    cost = caps.prices.cost(Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000,
                                  cache_write_tokens=1_000_000))
    assert cost == pytest.approx(2.0 + 10.0 + 0.10 + 2.5)


def test_openai_reasoning_model_takes_max_completion_tokens_and_no_temperature() -> None:
    caps = resolve(ProviderSettings(type="openai", model="gpt-6.2-sol", temperature=0.2, reasoning_effort="high"))
    assert caps.token_parameter == "max_completion_tokens" and caps.output_tokens == 32_000
    assert caps.temperature is None and caps.effort == "high"
    refused = resolve(ProviderSettings(type="openai", model="gpt-6.2-sol", reasoning_effort="none"))
    assert refused.effort is None and any("not sent" in n for n in refused.notes)


def test_unknown_model_gets_safe_defaults_and_one_note() -> None:
    caps = resolve(ProviderSettings(type="openai", model="qwen3-coder:30b", base_url="http://localhost:11434/v1"))
    assert not caps.profile.known and caps.output_tokens is None and caps.token_parameter is None
    assert caps.context_window == 128_000 and caps.prices.cost(Usage(10, 10)) is None
    assert len(caps.notes) == 1 and "qwen3-coder:30b" in caps.notes[0] and "\n" not in caps.notes[0]
    claude = resolve(ProviderSettings(type="anthropic", model="claude-next"))
    assert claude.output_tokens == 8192 and claude.token_parameter == "max_tokens" and not claude.thinking


def test_entry_overrides_the_profile_and_is_capped_by_it() -> None:
    caps = resolve(ProviderSettings(type="anthropic", model="claude-haiku-4-5", max_tokens=100_000,
                                    context_window=150_000, price_input_per_mtok=9.0, request_timeout_s=42,
                                    thinking="on"))
    assert caps.output_tokens == 64_000 and any("above what" in n for n in caps.notes)
    assert caps.context_window == 150_000 and caps.prices.input == 9.0 and caps.prices.output == 5.0
    assert caps.idle_timeout_s == 42 and caps.thinking and 1024 <= caps.thinking_budget < caps.output_tokens
    local = resolve(ProviderSettings(type="openai", model="local", max_tokens=2048))
    assert local.token_parameter == "max_tokens" and local.output_tokens == 2048


def test_thinking_off_where_the_model_always_thinks_is_noted() -> None:
    caps = resolve(ProviderSettings(type="anthropic", model="claude-opus-5-5", thinking="off"))
    assert caps.thinking and any("always thinks" in n for n in caps.notes)
    assert not resolve(ProviderSettings(type="anthropic", model="claude-sonnet-5-5", thinking="off")).thinking


def test_dated_alias_finds_its_profile_and_retirement_is_noted() -> None:
    caps = resolve(ProviderSettings(type="anthropic", model="claude-sonnet-4-5-20250929"))
    assert caps.profile.known and caps.context_window == 200_000
    assert any("end of life on 2026-11-30" in n for n in caps.notes)


def test_every_shipped_model_takes_images_but_the_small_local_ones() -> None:
    shipped = [(m, wire) for wire in ("anthropic", "openai") for m in known_models(wire)]
    assert [m for m, wire in shipped if not lookup(m, wire).images and not lookup(m, wire).small_model] == []
    assert not lookup("SmolLM2-135M-Instruct", "openai").images


@pytest.mark.parametrize("api_type, expected", [("openai", False), ("openai-responses", False), ("anthropic", True)])
def test_an_unknown_model_takes_images_only_on_the_anthropic_wire(api_type: str, expected: bool) -> None:
    assert resolve(ProviderSettings(type=api_type, model="local-thing")).images is expected


@pytest.mark.parametrize("model, entry, expected", [("local-vision", True, True), ("gpt-6.2-sol", False, False)])
def test_the_entry_says_whether_its_model_takes_images(model: str, entry: bool, expected: bool) -> None:
    assert resolve(ProviderSettings(type="openai", model=model, images=entry)).images is expected
