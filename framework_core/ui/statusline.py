"""The bottom toolbar, drawn from the façade's `Status` record: danger markers and the mode first, then provider
and model, context, tokens, persona and session, cut to the terminal's width from the least important end (it never
wraps into a second line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import FormattedText

if TYPE_CHECKING:
    from framework_core.core.facade import Status

ALARM = "bg:ansired fg:ansiwhite bold"
MODE_LOOK = {"accept-edits": ("bg:ansimagenta fg:ansiwhite bold", " ⏵⏵ accept edits "),
             "plan": ("bg:ansiblue fg:ansiwhite bold", " ⏸ plan mode "),
             "auto": ("bg:ansigreen fg:ansiblack bold", " ⏵⏵⏵ auto · sandboxed ")}
AUTO_NOT_READY = ("bg:ansiyellow fg:ansiblack bold", " ⏵⏵⏵ auto: commands ask (sandbox incomplete) ")


def status_parts(status: "Status") -> list[list[tuple[str, str]]]:
    """The toolbar's pieces, most important first; each piece is kept or dropped whole."""
    pieces: list[list[tuple[str, str]]] = []
    if status.allow_dangerous:
        pieces.append([(ALARM, " ALLOW-DANGEROUS "), ("", " ")])
    if status.dry_run:
        pieces.append([(ALARM, " DRY-RUN "), ("", " ")])
    if status.not_saved:  # until the transcript is written again
        pieces.append([(ALARM, " NOT SAVED "), ("", " ")])
    if not status.sandbox_active:
        pieces.append([(ALARM, f" {status.sandbox.upper()} "), ("", " ")])
    if status.mode in MODE_LOOK:
        style, label = AUTO_NOT_READY if status.mode == "auto" and not status.auto_ready else MODE_LOOK[status.mode]
        pieces.append([(style, label), ("", " ")])
    if status.no_api_key:
        pieces.append([(ALARM, " NO API KEY "), ("", " ")])
    pieces.append([("bold", f" {status.provider}"), ("", f" · {status.model}")])
    if status.sandbox_active:  # the profile in force, before the figures
        pieces.append([("fg:ansigreen", f" · ⛶ {status.sandbox}")])
    pieces.append([("", f" · ctx {status.context_percent:.0f}%")])
    pieces.append([("", f" · {status.totals}")])  # all tokens, and the cost
    pieces.append([("", f" · persona {status.persona}")])
    pieces.append([("", f" · session {status.session_id} ")])
    if status.mode == "ask":  # a hint: the first piece to go when the line is short
        pieces.append([("fg:ansibrightblack", " · ⇧Tab modes")])
    return pieces


def status_fragments(status: "Status", width: int | None = None) -> FormattedText:
    if width is None:
        try:
            from prompt_toolkit.application import get_app

            width = get_app().output.get_size().columns
        except Exception:  # no running application (a test): no limit
            width = 10_000
    out: list[tuple[str, str]] = []
    used = 0
    for piece in status_parts(status):
        size = sum(len(text) for _, text in piece)
        if used + size > width - 1:
            break  # the rest matters less
        out += piece
        used += size
    return FormattedText(out)
