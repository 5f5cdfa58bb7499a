"""First-run help: what to set for each provider, and which local OpenAI-compatible servers answer."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from framework_core.config.load import LoadedConfig
    from framework_core.errors import MissingApiKeyError

LOCAL_PORTS = {11434: "ollama", 1234: "lmstudio", 8080: "llamacpp", 8000: "vllm"}


def local_servers(timeout: float = 0.15) -> list[tuple[str, int]]:
    found = []
    for port, name in LOCAL_PORTS.items():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=timeout):
                found.append((name, port))
        except OSError:
            continue
    return found


def onboarding_text(loaded: "LoadedConfig", exc: "MissingApiKeyError", *, repl: bool = False) -> str:
    """What to set for each provider, in the words of how LACA was started (`laca …` or `make run ARGS=…`);
    in the REPL (`repl`), which stays open, how to switch from inside it."""
    from framework_core.wording import invocation

    cfg = loaded.config
    lines = [f"{'' if repl else 'laca: '}{exc}", "",
             "To chat, set the key of a hosted provider" + (" and start LACA again" if repl else "")
             + ", or point LACA at a local server:"]
    for name, p in sorted(cfg.llm_settings.items()):
        if p.api_key_env_var:
            lines.append(f"  export {p.api_key_env_var}=...   then: {invocation(f'--provider {name}')}")
    lines.append("  an OpenAI-compatible server elsewhere: export OPENAI_BASE_URL=http://HOST:PORT/v1 (and "
                 "OPENAI_API_KEY=anything if it checks none)")
    found = local_servers()
    if found:
        lines.append("")
        lines.append("Found local OpenAI-compatible servers, which need no key:")
        for name, port in found:
            if name in cfg.llm_settings:
                hint = f"/provider {name}" if repl else invocation(f"--provider {name}")
            else:
                hint = f"(port {port})"
            lines.append(f"  {name} on localhost:{port}   start with: {hint}")
    else:
        lines.append("  (no local server found on ports 11434 Ollama, 1234 LM Studio, 8080 llama.cpp, 8000 vLLM)")
    if repl:
        lines += ["", "This session stays open: /help works, and /provider switches to a provider whose key or "
                  "server is there."]
    lines += ["", f"Make a choice permanent with `{invocation('config init')}` (writes ~/.config/laca/config.yaml)."]
    return "\n".join(lines)


def offer_local_server(loaded: "LoadedConfig") -> str | None:
    """Ask whether to use a local server that answers; return its provider name, or None."""
    found = [(name, port) for name, port in local_servers() if name in loaded.config.llm_settings]
    for name, port in found:
        try:
            answer = input(f"\nUse {name} on localhost:{port} now? [Y/n] ").strip().lower()
        except (EOFError, KeyboardInterrupt):
            return None
        if answer in ("", "y", "yes"):
            return name
    return None
