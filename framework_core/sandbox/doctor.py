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
    return 0
