"""What the user asked for when starting LACA (flags and arguments), as the app layer hands it to a front end."""

from __future__ import annotations

from dataclasses import dataclass, field

from framework_core.config.load import Overrides


@dataclass
class StartOptions:
    overrides: Overrides = field(default_factory=Overrides)
    prompt: str | None = None
    output_format: str = "text"
    continue_latest: bool = False
    resume: str | None = None  # "" = list sessions
    dry_run: bool = False
    no_mcp: bool = False
    fork: bool = False  # with --continue / --resume: a new session starting from that one's history
    message: str | None = None  # the REPL's first message (`laca "fix the failing test"`)
    allow: list[str] = field(default_factory=list)  # --allow PATTERN: extra allow rules for this run
    permission_mode: str | None = None  # --permission-mode: ask, accept-edits, plan or auto
