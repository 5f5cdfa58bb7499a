"""Where LACA keeps the user's files, through platformdirs: config in `$XDG_CONFIG_HOME/laca` (by default
`~/.config/laca` on Linux), sessions, history, logs and the trust store in `$XDG_DATA_HOME/laca`, the sandbox's
overlays in `$XDG_STATE_HOME/laca`."""

from __future__ import annotations

from pathlib import Path


def user_config_dir() -> Path:
    """The user's LACA config folder: `$XDG_CONFIG_HOME/laca`, by default `~/.config/laca` on Linux."""
    from platformdirs import user_config_path

    return user_config_path("laca", appauthor=False)


def user_data_dir() -> Path:
    """Sessions, history, logs and the trust store: `$XDG_DATA_HOME/laca`, by default `~/.local/share/laca`
    on Linux."""
    from platformdirs import user_data_path

    return user_data_path("laca", appauthor=False)


def user_state_dir() -> Path:
    """Scratch state that must survive a crash: `$XDG_STATE_HOME/laca`, by default `~/.local/state/laca` on
    Linux (the sandbox's overlays, kept on the workspace's file system there when it can)."""
    from platformdirs import user_state_path

    return user_state_path("laca", appauthor=False)


def user_config_path() -> Path:
    return user_config_dir() / "config.yaml"


def user_cache_dir() -> Path:
    """Caches LACA owns: `$XDG_CACHE_HOME/laca`, by default `~/.cache/laca` on Linux (the sandboxed commands'
    package caches live in `sandbox-home/` there)."""
    from platformdirs import user_cache_path

    return user_cache_path("laca", appauthor=False)
