"""Run a fake LLM server in the foreground for manual testing:

    python -m tests.fakes.serve --wire openai --port 8765
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=test laca

The OpenAI fake answers both Chat Completions (type: openai) and the Responses API (type: openai-responses)
on the same base URL, as api.openai.com does; `--wire openai-responses` starts the same server. Its model
`fake-reasoner` reasons (reasoning items, summaries with `reasoning_summary: auto`). `--dialect` makes the
Chat Completions side behave like a compatible server: gemini, vllm or ollama.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import DIALECTS, FakeOpenAIServer

RESPONSES_HINT = """\
A provider entry for the Responses API (e.g. in the workspace's framework_config.yaml):
  llm_provider: fake
  llm_settings:
    fake:
      type: openai-responses
      base_url: {url}
      model: fake-reasoner
      api_key_env_var: OPENAI_API_KEY
      reasoning_summary: auto
Try:  hello      run: ls -la      multi: pwd ;; date      read: f.txt      edit: f.txt ;; old ;; new"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wire", choices=["openai", "openai-responses", "anthropic"], default="openai")
    parser.add_argument("--dialect", choices=DIALECTS, default="openai",
                        help="which server the OpenAI Chat Completions side imitates")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    server: FakeOpenAIServer | FakeAnthropicServer
    if args.wire == "anthropic":
        server = FakeAnthropicServer(api_key=args.api_key, port=args.port)
    else:
        server = FakeOpenAIServer(api_key=args.api_key, port=args.port, dialect=args.dialect)
    var = "ANTHROPIC_BASE_URL" if args.wire == "anthropic" else "OPENAI_BASE_URL"
    print(f"fake {args.wire} server: {server.base_url}   (export {var}={server.base_url})", flush=True)
    if args.wire == "openai-responses":
        print(RESPONSES_HINT.format(url=server.base_url), flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)  # a person watches this: show what arrived a few times a second
            for body in server.requests[seen:]:
                print(summary(body), flush=True)
            seen = len(server.requests)
    except KeyboardInterrupt:
        server.close()


def summary(body: dict[str, Any]) -> str:
    """One line per request: what a person testing by hand wants to see arrive."""
    if "input" in body:
        items = body["input"] if isinstance(body["input"], list) else [{"type": "message"}]
        kinds = [i.get("type") or "message" for i in items]
        extra = f" store={body.get('store')} include={body.get('include')} reasoning={body.get('reasoning')}"
        return f"<- responses model={body.get('model')} input={kinds}{extra}"
    roles = [m.get("role") for m in body.get("messages") or []]
    return f"<- chat model={body.get('model')} messages={roles}"


if __name__ == "__main__":
    main()
