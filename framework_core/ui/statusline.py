"""The bottom toolbar: danger markers and the mode first, then provider and model, context, tokens, persona and
session, cut to the terminal's width from the least important end (it never wraps into a second line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import FormattedText

from framework_core.core.accounting import status_total

if TYPE_CHECKING:
    from framework_core.core.agent import Agent

ALARM = "bg:ansired fg:ansiwhite bold"
MODE_LOOK = {"accept-edits": ("bg:ansimagenta fg:ansiwhite bold", " ⏵⏵ accept edits "),
             "plan": ("bg:ansiblue fg:ansiwhite bold", " ⏸ plan mode ")}
_cache: dict[str, tuple[tuple, int]] = {}


def context_share(agent: "Agent") -> float:
    """Percent of the context window the next request takes: the same measure as /tokens and compaction,
    computed again only when the conversation or the model changed (the toolbar redraws on every key)."""
    from framework_core.core.compaction import context_used

    last = agent.session.last_usage
    key = (id(agent.session), len(agent.session.messages), agent.context_mark, last.context_tokens,
           last.output_tokens, agent.provider_name, agent.provider.model)
    cached = _cache.get("ctx")
    if cached is None or cached[0] != key:
        _cache["ctx"] = cached = (key, context_used(agent))
    window = agent.caps.context_window
    return 100 * cached[1] / window if window else 0.0


def status_parts(agent: "Agent") -> list[list[tuple[str, str]]]:
    """The toolbar's pieces, most important first; each piece is kept or dropped whole."""
    pieces: list[list[tuple[str, str]]] = []
    if agent.teps.policy.allow_dangerous:
        pieces.append([(ALARM, " ALLOW-DANGEROUS "), ("", " ")])
    if agent.teps.dry_run:
        pieces.append([(ALARM, " DRY-RUN "), ("", " ")])
    if agent.session.write_error:  # until the transcript is written again
        pieces.append([(ALARM, " NOT SAVED "), ("", " ")])
    sandbox = getattr(agent.teps, "sandbox", None)
    if sandbox is not None and not sandbox.active:
        pieces.append([(ALARM, f" {sandbox.describe().upper()} "), ("", " ")])
    mode = getattr(agent.teps, "mode", "ask")
    if mode in MODE_LOOK:
        style, label = MODE_LOOK[mode]
        pieces.append([(style, label), ("", " ")])
    if agent.key_problem is not None:
        pieces.append([(ALARM, " NO API KEY "), ("", " ")])
    pieces.append([("bold", f" {agent.provider_name}"), ("", f" · {agent.provider.model}")])
    if sandbox is not None and sandbox.active:  # the profile in force, before the figures
        pieces.append([("fg:ansigreen", f" · ⛶ {sandbox.describe()}")])
    pieces.append([("", f" · ctx {context_share(agent):.0f}%")])
    pieces.append([("", f" · {status_total(agent.session.usage, agent.caps.prices)}")])  # all tokens, and the cost
    pieces.append([("", f" · persona {agent.persona_id}")])
    pieces.append([("", f" · session {agent.session.session_id} ")])
    if mode == "ask":  # a hint: the first piece to go when the line is short
        pieces.append([("fg:ansibrightblack", " · ⇧Tab modes")])
    return pieces


def status_fragments(agent: "Agent", width: int | None = None) -> FormattedText:
    if width is None:
        try:
            from prompt_toolkit.application import get_app

            width = get_app().output.get_size().columns
        except Exception:  # no running application (a test): no limit
            width = 10_000
    out: list[tuple[str, str]] = []
    used = 0
    for piece in status_parts(agent):
        size = sum(len(text) for _, text in piece)
        if used + size > width - 1:
            break  # the rest matters less
        out += piece
        used += size
    return FormattedText(out)
