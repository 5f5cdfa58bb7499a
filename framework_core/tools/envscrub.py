"""The environment commands run in: an allowlist (`framework_core/sandbox/environment.py`), not a list of
secret-looking names. Kept under this name for the code that imports it."""

from __future__ import annotations

from typing import Mapping

from framework_core.sandbox.environment import command_env


def scrub_env(env: Mapping[str, str], keep: list[str] | tuple[str, ...] = ()) -> tuple[dict[str, str],
                                                                                      tuple[str, ...]]:
    """Return (the allowed environment, sorted names withheld). Proxy variables are kept here; the sandbox
    removes them for a command without the network."""
    return command_env(env, keep, network=True)
