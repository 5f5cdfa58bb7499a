"""The ICERC approval panel: the model's brief (its claim) beside the exact action (the truth)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from framework_core.approval import ApprovalRequest
from framework_core.policy.levels import Level
from framework_core.ui.safe_text import visible

LEVEL_STYLE = {Level.SAFE: "green", Level.NEEDS_CONFIRM: "yellow", Level.DANGEROUS: "red"}
LEVEL_WORD = {Level.SAFE: "safe", Level.NEEDS_CONFIRM: "needs confirmation", Level.DANGEROUS: "DANGEROUS"}


def fold_body(body: str, max_lines: int) -> tuple[str, int]:
    """Cut `body` to `max_lines`, returning the cut text and how many lines were left out (never silent)."""
    lines = body.splitlines()
    if len(lines) <= max_lines:
        return body, 0
    return "\n".join(lines[:max_lines]), len(lines) - max_lines


def approval_panel(req: ApprovalRequest, *, max_lines: int = 120) -> RenderableType:
    style = LEVEL_STYLE[req.level]
    parts: list[RenderableType] = []
    brief = visible(req.request.icerc_full_text.strip())
    parts.append(Text("Model's brief (ICERC)", style="bold"))
    if brief:
        parts.append(Text(brief, style="laca.brief"))
    else:
        parts.append(Text("⚠ The model gave no ICERC brief for this call. Judge it by the action below.",
                          style="laca.warn"))
    parts.append(Text(""))
    parts.append(Text(f"What will actually happen: {req.preview.title}", style="bold"))
    if req.control_note:
        parts.append(Text(f"⚠ {visible(req.control_note)}", style="bold red"))
    if req.server:
        parts.append(Text(f"Server: {req.server}   Tool: {req.request.tool_name}", style="laca.info"))
    if req.preview.full_body:
        parts.append(Text("Long values are folded below; press v to view them whole.", style="laca.dim"))
    if req.preview.body:
        body, hidden = fold_body(visible(req.preview.body), max_lines)
        if req.preview.lexer:
            parts.append(Syntax(body, req.preview.lexer, word_wrap=True, theme="ansi_dark", background_color="default"))
        else:
            parts.append(Text(body))
        if hidden:
            parts.append(Text(f"… {hidden} more lines not shown here — press v to view all of it.", style="laca.warn"))
    for note in req.preview.notes:
        parts.append(Text(f"• {visible(note)}", style="laca.warn"))
    if req.sandbox_note:
        parts.append(Text(f"⛶ {req.sandbox_note}", style="bold laca.warn" if req.sandbox_warn else "laca.dim"))
    parts.append(Text(""))
    verdict = Text(f"Policy: {LEVEL_WORD[req.level]}", style=f"bold {style}")
    parts.append(verdict)
    for reason in req.reasons[:8]:  # the policy orders them riskiest first
        parts.append(Text(f"  – {visible(reason)}", style=style))
    if len(req.reasons) > 8:
        parts.append(Text(f"  … and {len(req.reasons) - 8} more (press v to see them all)", style=style))
    if req.warning:
        parts.append(Text(""))
        parts.append(Text(req.warning, style="bold laca.warn"))
    if req.allow_session:
        parts.append(Text(""))
        parts.append(Text(f"[a] would remember for this session: {visible(req.grant_options[0].label)}"
                          + (" (or a prefix you pick)" if len(req.grant_options) > 1 else ""), style="laca.dim"))
    count = f" · call {req.index} of {req.total}" if req.total > 1 else ""
    title = f"[bold]{req.request.tool_name}[/bold]{count} · {LEVEL_WORD[req.level]}"
    if req.server:
        title = f"[bold]Allow tool call from {req.server}?[/bold]{count}"
    return Panel(Group(*parts), title=title, title_align="left", border_style=style, expand=True)


def question_text(req: ApprovalRequest) -> str:
    out = ("  [p] preview" if req.can_preview else "") + ("  [u] outside the sandbox" if req.can_unsandbox else "")
    if req.server:
        return "[y] allow once  [n] deny  [a] allow for this chat  [v] view all: "
    if req.level == Level.DANGEROUS:
        return f"Run this DANGEROUS action once? [y/N]{out} "
    if req.allow_session:
        return f"Allow? [y] once  [n] no  [a] always this session  [v] view all{out}: "
    return f"Allow? [y] once  [n] no  [v] view all{out}: "
