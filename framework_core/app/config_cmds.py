"""`config init` and `config show`."""

from __future__ import annotations

from pathlib import Path

from framework_core.config.load import LoadedConfig, Overrides, load_config
from framework_core.config.dirs import user_config_path

USER_TEMPLATE = """\
# LACA user config. Layered above the framework's framework_config.yaml and below a workspace
# framework_config.yaml, env vars (LACA_PROVIDER, LACA_MODEL, LACA_PERSONA) and flags.
# `laca config show` prints the effective values with their sources.

# Which provider to use by default (a key of llm_settings): openai, anthropic, ollama, lmstudio,
# llamacpp, vllm, openrouter, gemini, or one you add below.
# llm_provider: anthropic

# default_persona: forge

# llm_settings:
#   anthropic:
#     model: claude-opus-5-5   # what a model can do comes from its profile; /model lists the server's
#     thinking: auto           # auto | on | off (where the model allows)
#     reasoning_effort: high   # a level the model's profile lists
#   my-server:                 # any OpenAI-compatible server
#     type: openai
#     base_url: http://localhost:9000/v1
#     model: my-model
#     api_key_env_var: MY_SERVER_KEY   # omit when the server needs no key
#     context_window: 32768    # models without a profile: say what the server gives
#     max_tokens: 8192         # the output limit (unset: the server's default)

# teps_settings:
#   command_timeout_s: 120
#   allowlist_file: ~/.config/laca/allow.txt   # one allowed command prefix per line
#   dry_run_enabled: false
#   output_max_bytes: 50000000           # a command printing more is stopped
#   output_session_max_bytes: 500000000  # disk for a session's saved full outputs

# mcp_servers:
#   time:
#     command: uvx
#     args: [mcp-server-time]
#     permission: ask          # always | ask | never

# ui:
#   code_theme: solarized-light   # any Pygments style; monokai by default, `default` suits light terminals
"""


def init_user_config(force: bool = False) -> str:
    path = user_config_path()
    if path.exists() and not force:
        return f"{path} exists already; edit it, or use --force to overwrite it."
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USER_TEMPLATE, encoding="utf-8")
    return f"Wrote {path}. Uncomment what you want to change."


def _flatten(value: object, prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], object]]:
    if isinstance(value, dict) and value:
        out = []
        for k, v in value.items():
            out += _flatten(v, prefix + (str(k),))
        return out
    return [(prefix, value)]


SDK_BASE_URL = {"openai": "OPENAI_BASE_URL", "openai-responses": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def show_config(overrides: Overrides, workspace: Path | None = None, *, all_providers: bool = False) -> str:
    """The effective config, each value with the layer that set it ("default" when none did); the active
    provider only, unless `all_providers`."""
    import os

    loaded: LoadedConfig = load_config(workspace, overrides)
    cfg = loaded.config
    data = cfg.model_dump(mode="json")
    others = sorted(n for n in data.get("llm_settings", {}) if n != cfg.llm_provider)
    if not all_providers:
        data["llm_settings"] = {cfg.llm_provider: data["llm_settings"][cfg.llm_provider]}
    lines = [f"Workspace: {loaded.workspace}", "Files read: " + (", ".join(map(str, loaded.files)) or "(none)"), ""]
    for path, value in _flatten(data, ()):
        key = ".".join(path)
        shown = value
        if path[-1] == "api_key_env_var" and value:
            state = "set" if os.environ.get(str(value)) else "NOT set"
            shown = f"{value}  (env var {state}; value masked)"
        elif path[:1] == ("llm_settings",) and path[-1] == "base_url" and value is None:
            var = SDK_BASE_URL.get(str(cfg.llm_settings[path[1]].type))
            if var and os.environ.get(var):
                shown = f"None  (unset here, so the SDK uses ${var} = {os.environ[var]})"
        lines.append(f"{key} = {shown}    # {loaded.source_of(path)}")
    if others and not all_providers:
        lines += ["", f"Other providers: {', '.join(others)} (laca config show --all lists them too)"]
    return "\n".join(lines)
