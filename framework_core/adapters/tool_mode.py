"""Which tool mode an OpenAI-compatible server needs: native (`tools` in the request) or generic
(`adapters/generic_tools.py`), found out once per server and model and remembered in LACA's data folder
(`tool-modes.json`).

A server drops the tools when the model's chat template has no place for them: llama.cpp says so in `GET
/props` (`chat_template_caps.supports_tools`); any other server shows it in the prompt tokens it counts, the
same for a tiny request with the tools as without them. The first request that carries tools asks `/props`
(one GET); `laca doctor` compares the tokens too. What either found is remembered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from framework_core.lial_core import ToolSchema

STORE_NAME = "tool-modes.json"


@dataclass(frozen=True)
class Finding:
    """What the probe found: the mode to use and why, in words for `laca doctor` and a notice."""

    mode: str  # native | generic
    dropped: bool | None  # True: the server drops tools; False: it passes them; None: could not tell
    why: str
    llamacpp: bool = False  # found in llama.cpp's /props (which reports the template's capabilities)


def from_props(props: dict[str, Any] | None) -> Finding | None:
    """llama.cpp's `/props`: a finding when it reports its chat template's capabilities, else None."""
    if not isinstance(props, dict):
        return None
    caps = props.get("chat_template_caps")
    if not isinstance(caps, dict) or "supports_tools" not in caps:
        return None
    if caps.get("supports_tools") or caps.get("supports_tool_calls"):
        return Finding("native", False, "llama.cpp's /props: the chat template supports tools", llamacpp=True)
    return Finding("generic", True, "llama.cpp's /props: the model's chat template has no tool support, so the "
                                    "server drops tools (no flag changes that short of another template, "
                                    "--chat-template-file)", llamacpp=True)


def from_tokens(with_tools: int, without: int, tools_estimate: int) -> Finding:
    """Two tiny requests, with and without the tools: the tools must add prompt tokens (a quarter of their
    estimate at least; tokenizers differ, templates add their own wrapping)."""
    if not with_tools or not without:
        return Finding("native", None, "the server reports no prompt tokens, so LACA cannot tell whether it "
                                       "drops tools")
    added = with_tools - without
    if added < max(8, tools_estimate // 4):
        return Finding("generic", True, f"the server counted {with_tools:,} prompt tokens with the tools and "
                                        f"{without:,} without (the tools are about {tools_estimate:,}): it "
                                        "drops them")
    return Finding("native", False, f"the tools reach the model ({added:,} prompt tokens)")


def probe(get_props: Callable[[], dict[str, Any] | None], prompt_tokens: Callable[[bool], int] | None,
          tools: list["ToolSchema"]) -> Finding:
    """`/props` first (llama.cpp), else the token comparison; `prompt_tokens(with_tools)` sends one request
    (None: a session's first request asks `/props` only, `laca doctor` compares tokens too)."""
    from framework_core.estimate import request_tokens

    try:
        found = from_props(get_props())
    except Exception:
        found = None
    if found is not None:
        return found
    if prompt_tokens is None:
        return Finding("native", None, "the server does not report its chat template's capabilities (laca doctor "
                                       "compares the prompt tokens with and without tools)")
    return from_tokens(prompt_tokens(True), prompt_tokens(False), request_tokens("", tools))


class ToolModeMemory:
    """Remembered modes, per server address and model."""

    def __init__(self, path: Any = None) -> None:
        from framework_core.config.json_store import JsonStore

        if path is None:
            from framework_core.config.dirs import user_data_dir

            path = user_data_dir() / STORE_NAME
        self.store = JsonStore(path, what="remembered tool modes", check=_checked, empty=dict,
                               lost=lambda _d: "the tool mode found for each local server: LACA finds it again")

    @staticmethod
    def key(base_url: str | None, model: str) -> str:
        return f"{(base_url or '').rstrip('/')} {model}"

    def get(self, base_url: str | None, model: str) -> str | None:
        try:
            entry = self.store.read().get(self.key(base_url, model))
        except OSError:
            return None
        return entry.get("mode") if isinstance(entry, dict) else None

    def remember(self, base_url: str | None, model: str, finding: Finding) -> None:
        try:
            with self.store.update() as data:
                data[self.key(base_url, model)] = {"mode": finding.mode, "why": finding.why}
        except OSError:
            pass  # not remembered: found out again next time


def _checked(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return {k: v for k, v in data.items() if isinstance(v, dict) and v.get("mode") in ("native", "generic")}
