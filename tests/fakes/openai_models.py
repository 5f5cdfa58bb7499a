"""The models the fake OpenAI endpoints serve, and what each accepts, as api.openai.com decides it.

Known models are the fake's own names plus the installed SDK's model lists (generated from the API's
OpenAPI description), less those retired. Reasoning models (the o-series, gpt-5 and later, except the
`*-chat-latest` chat models) take `max_completion_tokens` and a reasoning effort and refuse sampling
parameters; the others take either token parameter and refuse a reasoning effort. Deliberately
independent of LACA's own capability profiles: a fake that read them could not catch them being wrong.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tests.fakes.literals import literal_strings

FAKE_PLAIN = {"fake-gpt", "fake-gpt-mini", "fake-model", "m"}  # "m": the name the benchmarks send
FAKE_REASONING = {"fake-reasoner"}
FAKE_TEXT_ONLY = {"fake-text-only"}  # takes no image input, like gpt-3.5-turbo and o3-mini
TEXT_ONLY_NAME = re.compile(r"^(gpt-3\.5|o1-mini|o3-mini)")
RETIRED = {"o4-mini", "o4-mini-2025-04-16"}
REASONING_NAME = re.compile(r"^(o\d|gpt-([5-9]|\d\d)|codex-)")


@lru_cache(maxsize=1)
def sdk_models() -> frozenset[str]:
    from openai.types.shared.responses_model import ResponsesModel

    return literal_strings(ResponsesModel)


def known(model: str) -> bool:
    return model in FAKE_PLAIN | FAKE_REASONING | FAKE_TEXT_ONLY or (model in sdk_models() and model not in RETIRED)


def takes_images(model: str) -> bool:
    return model not in FAKE_TEXT_ONLY and not TEXT_ONLY_NAME.match(model)


def no_images(part_type: str) -> str:
    """The API's answer to an image part sent to a model that takes no images."""
    return f"Invalid content type. {part_type} is only supported by certain models."


def is_reasoning(model: str) -> bool:
    if model in FAKE_REASONING:
        return True
    return bool(REASONING_NAME.match(model)) and not model.endswith("-chat-latest")


def listed() -> list[str]:
    """What GET /models answers: the fake's own models first."""
    return sorted(FAKE_PLAIN - {"m"}) + sorted(FAKE_REASONING)


def model_not_found(model: str) -> str:
    return f"The model `{model}` does not exist or you do not have access to it."
