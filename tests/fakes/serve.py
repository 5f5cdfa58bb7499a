"""Run a fake LLM server in the foreground for manual testing:

    python -m tests.fakes.serve --wire openai --port 8765
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=test laca
"""

from __future__ import annotations

import argparse
import time

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wire", choices=["openai", "anthropic"], default="openai")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    cls = FakeOpenAIServer if args.wire == "openai" else FakeAnthropicServer
    server = cls(api_key=args.api_key, port=args.port)
    var = "OPENAI_BASE_URL" if args.wire == "openai" else "ANTHROPIC_BASE_URL"
    print(f"fake {args.wire} server: {server.base_url}   (export {var}={server.base_url})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
