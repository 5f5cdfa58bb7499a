"""`laca doctor`: what the command sandbox can set up on this machine, and what follows where a part is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from framework_core.config.load import Overrides


def run_doctor(overrides: "Overrides", out: TextIO) -> int:
    """Print one line per check; exit 0 when the configured sandbox can run as configured, 1 otherwise."""
    from framework_core.config.load import load_config
    from framework_core.sandbox.probe import probe

    loaded = load_config(overrides=overrides)
    cfg = loaded.config.sandbox
    report = probe()
    out.write(f"Sandbox profile: {cfg.profile} (workspace {loaded.workspace})\n")
    for ok, text in report.lines():
        out.write(f"  {'✓' if ok else '✗'} {text}\n")
    if cfg.profile == "off":
        out.write("The sandbox is off by configuration: commands run with your own permissions, and every "
                  "command that is not Safe asks.\n")
        return 0
    if not report.available:
        out.write("Missing: " + "; ".join(report.missing()) + ".\nWhat follows: commands run unconfined, so every "
                  "command that is not Safe asks (rules and session grants included).\n")
        return 1
    if cfg.overlay and not report.overlay:
        out.write("The workspace cannot be overlaid here: commands write to it directly, and /undo covers only "
                  "file writes, not commands.\n")
    else:
        out.write("All parts hold: commands run confined as the profile says.\n")
    _home_and_environment(loaded, out)
    return 0


def _home_and_environment(loaded, out: TextIO) -> None:
    """The home and the environment as a command sees them (names only, never values)."""
    import os
    from pathlib import Path

    from framework_core.config.dirs import user_config_dir, user_data_dir
    from framework_core.sandbox.environment import PROXY, command_env
    from framework_core.sandbox.home import load_allow
    from framework_core.sandbox.sandbox import Sandbox

    cfg = loaded.config.sandbox
    allow = load_allow().extended(cfg.home_allow, cfg.home_caches, home=Path.home(),
                                  where=loaded.source_of(("sandbox", "home_allow")))
    sandbox = Sandbox(cfg.profile, loaded.workspace, laca_dirs=(user_config_dir(), user_data_dir()),
                      hidden_extra=tuple(cfg.hidden_paths), use_overlay=cfg.overlay, home_allow=allow)
    try:
        out.write("What a command sees of the home (sandbox.home_allow and home_caches add entries; the list: "
                  f"{allow.source}):\n")
        for line in sandbox.home_description():
            out.write(f"  {line}\n")
        if sandbox.home_notice():
            out.write(f"  {sandbox.home_notice()}\n")
    finally:
        sandbox.close()
    keep = loaded.config.teps_settings.keep_env
    passed, withheld = command_env(os.environ, keep, network=True)
    proxies = sorted(n for n in passed if n in PROXY)
    out.write("Environment a command gets (names; teps_settings.keep_env adds names or globs):\n")
    out.write("  passed: " + (", ".join(sorted(n for n in passed if n not in PROXY)) or "(none)") + "\n")
    if proxies:
        out.write("  only with the network: " + ", ".join(proxies) + "\n")
    out.write("  withheld: " + (", ".join(withheld) or "(none)") + "\n")
    if loaded.config.teps_settings.scrub_env_patterns is not None:
        out.write("  note: teps_settings.scrub_env_patterns is no longer used (the environment is an allowlist); "
                  "remove it, and list variables commands need in keep_env.\n")
