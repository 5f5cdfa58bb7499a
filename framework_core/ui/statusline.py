"""The bottom toolbar: provider and model, persona, tokens and % of context, session, red danger markers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import FormattedText

if TYPE_CHECKING:
    from framework_core.core import Agent


def used_tokens(agent: "Agent") -> int:
    """Every token the session's requests processed, cached input included (the cache is billed too)."""
    u = agent.session.usage
    return u.context_tokens + u.output_tokens


def status_fragments(agent: "Agent") -> FormattedText:
    p = agent.provider
    last = agent.session.last_usage
    window = agent.caps.context_window  # the model's profile, or the entry's own context_window
    pct = 100 * (last.context_tokens + last.output_tokens) / window if window else 0
    parts: list[tuple[str, str]] = []
    if agent.teps.policy.allow_dangerous:
        parts.append(("bg:ansired fg:ansiwhite bold", " ALLOW-DANGEROUS "))
        parts.append(("", " "))
    if agent.teps.dry_run:
        parts.append(("bg:ansired fg:ansiwhite bold", " DRY-RUN "))
        parts.append(("", " "))
    if agent.session.write_error:  # until the transcript is written again
        parts.append(("bg:ansired fg:ansiwhite bold", " NOT SAVED "))
        parts.append(("", " "))
    sandbox = getattr(agent.teps, "sandbox", None)
    if sandbox is not None and not sandbox.active:
        parts.append(("bg:ansired fg:ansiwhite bold", f" {sandbox.describe().upper()} "))
        parts.append(("", " "))
    elif sandbox is not None:
        parts.append(("fg:ansigreen", f" ⛶ {sandbox.describe()}"))
    parts += [
        ("bold", f" {agent.provider_name}"), ("", f" · {p.model}"),
        ("", f" · persona {agent.persona_id}"),
        ("", f" · {used_tokens(agent):,} tok"), ("", f" · ctx {pct:.0f}%"),
        ("", f" · session {agent.session.session_id} "),
    ]
    return FormattedText(parts)
