"""The records a front end reads in one call: what the status line shows, and how closing a session went. The
turn loop (`core/agent.py`) makes them; the façade hands them out."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Status:
    """What the status line and the prompt show, read in one call."""

    provider: str
    model: str
    persona: str
    mode: str
    dry_run: bool
    allow_dangerous: bool
    not_saved: bool
    no_api_key: bool
    sandbox: str  # the profile in force, or why there is none
    sandbox_active: bool
    context_percent: float
    totals: str  # all tokens so far, and the cost where prices are known
    session_id: str
    auto_ready: bool = True  # auto mode can run commands without asking (Sandbox.is_complete()); else they ask


@dataclass(frozen=True)
class Closed:
    """How closing went: the session's id and, when it could not be written, why."""

    session_id: str
    problem: str | None
