"""The child process of `--provider local` (`app/local_server.py`): llama.cpp's server from the xllamacpp
wheel on a free loopback port. It prints `LISTENING <address>` once the model is loaded and serves until its
standard input closes (LACA exited, or stopped it)."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m framework_core.app.llama_serve")
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_ctx = args.context
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, chosen by the server
    params.ui = False
    params.use_jinja = True
    server = xllamacpp.Server(params)
    print(f"LISTENING {server.listening_address}", flush=True)
    try:
        sys.stdin.read()  # until LACA closes its end
    except KeyboardInterrupt:
        pass
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
