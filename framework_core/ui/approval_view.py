"""The ICERC approval panel. It leads with the action (the truth, taken from the arguments): the command or
the diff first; the model's brief (its claim) is folded when it agrees with the action and flagged loudly
when it does not. The panel is cut to fit the terminal, so the title, the action and the question stay
on screen; `v` shows everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from framework_core.core.approval import ApprovalRequest
from framework_core.policy.levels import Level
from framework_core.ui.safe_text import visible

LEVEL_STYLE = {Level.SAFE: "green", Level.NEEDS_CONFIRM: "yellow", Level.DANGEROUS: "red"}
LEVEL_WORD = {Level.SAFE: "safe", Level.NEEDS_CONFIRM: "needs confirmation", Level.DANGEROUS: "DANGEROUS"}
FIELD = re.compile(r"^\s*(intent|command|expected outcome|risk assessment|risk|confirmation request)\s*:\s*",
                   re.I | re.M)


def fold_body(body: str, max_lines: int) -> tuple[str, int]:
    """Cut `body` to `max_lines`, returning the cut text and how many lines were left out (never silent).
    A body that ends with its own `… N more lines` marker (a long new file's preview) counts those too."""
    lines = body.splitlines()
    if len(lines) <= max_lines:
        return body, 0
    marker = re.match(r"… (\d+) more lines", lines[-1])
    beyond = int(marker.group(1)) - 1 if marker else 0  # the marker line stands for them
    return "\n".join(lines[:max_lines]), len(lines) - max_lines + beyond


def brief_fields(brief: str) -> dict[str, str]:
    """The ICERC fields of a brief, by lower-case label ("intent", "command", ...)."""
    marks = list(FIELD.finditer(brief))
    out: dict[str, str] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(brief)
        out.setdefault(m.group(1).lower(), brief[m.end():end].strip())
    return out


def _norm(text: str) -> str:
    text = " ".join(text.split())
    for _ in range(2):
        text = text.strip().strip("`'\"").strip()
        text = text[2:] if text.startswith("$ ") else text
    return text


@dataclass(frozen=True)
class BriefCheck:
    state: str  # "agrees" | "differs" | "unnamed" | "missing" | "open" (nothing to check against)
    claimed: str = ""  # what the brief says the action is, when it says so


def check_brief(req: ApprovalRequest) -> BriefCheck:
    """Does the brief describe the action that will run? Only a brief naming exactly this command (or this
    file) agrees; one naming another command differs, and the panel says so in red."""
    brief = req.request.icerc_full_text.strip()
    if not brief:
        return BriefCheck("missing")
    claimed = brief_fields(brief).get("command", "")
    if req.preview.lexer == "bash" and req.preview.body:
        action = _norm(req.preview.body)
        if claimed:
            return BriefCheck("agrees" if _norm(claimed) == action else "differs", claimed)
        return BriefCheck("agrees" if action in _norm(brief) else "unnamed")
    if req.preview.path:
        from pathlib import PurePath

        names = [PurePath(p).name for p in req.preview.paths or [req.preview.path]]  # a patch: any of its files
        said = claimed or brief
        return BriefCheck("agrees" if any(n and n in said for n in names) else ("differs" if claimed else "unnamed"),
                          claimed)
    return BriefCheck("open", claimed)


LOW_RISK = re.compile(r"\b(none|no risk|nothing|low|minimal|negligible|trivial|safe|harmless|read[- ]only)\b", re.I)
NOT_LOW = re.compile(r"\b(not|high|medium|moderate|significant|destructive|irreversib\w*|danger\w*)\b", re.I)
DESTRUCTIVE = re.compile(r"\b(delet\w*|remov\w*|overwrit\w*|truncat\w*|shred\w*|wip\w*|eras\w*|discard\w*|"
                         r"destroy\w*|unlink\w*|force[- ]push\w*|reset --hard)", re.I)


def stated_risk(req: ApprovalRequest) -> str:
    """The model's own reading of the risk (the brief's `Risk assessment:` line), on one line; "" when none."""
    fields = brief_fields(req.request.icerc_full_text)
    return " ".join((fields.get("risk assessment") or fields.get("risk") or "").split())


def decisive_first(req: ApprovalRequest) -> list[str]:
    """The policy's reasons, the decisive one first: a Dangerous verdict's come riskiest first already; among
    reasons to confirm, a destructive one (a delete, an overwrite) leads, so a small terminal still shows it."""
    if req.level == Level.DANGEROUS:
        return list(req.reasons)
    return sorted(req.reasons, key=lambda r: not DESTRUCTIVE.search(r))


def risk_mismatch(req: ApprovalRequest) -> str | None:
    """`brief says low risk; the command deletes files` when the brief claims low risk and the policy reads the
    call as Dangerous, or as needing confirmation for a destructive reason (a delete, an overwrite); else None."""
    risk = stated_risk(req)
    low = LOW_RISK.search(risk)
    if not low or NOT_LOW.search(risk) or DESTRUCTIVE.search(risk) or req.level == Level.SAFE:  # it owns up
        return None
    decisive = next((r for r in req.reasons if DESTRUCTIVE.search(r)), None)
    if decisive is None and req.level == Level.DANGEROUS and req.reasons:
        decisive = req.reasons[0]
    if decisive is None:
        return None
    word = low.group(1).lower()
    claim = ("no risk" if word in ("none", "no risk", "nothing") else f"it is {word}"
             if word in ("safe", "harmless", "read-only", "read only") else f"{word} risk")
    what = "the command" if req.preview.lexer == "bash" else "the call"
    decisive = re.sub(r'^"[^"]*":\s*', "", decisive)  # the policy names the part of the command it judged
    verb = decisive.split(" ", 1)[0]
    said = f"{what} {decisive}" if verb.islower() and verb.endswith("s") else f"the policy reads: {decisive}"
    return f"brief says {claim}; {said}"


def _brief_parts(req: ApprovalRequest, check: BriefCheck, compact: bool = False) -> list[RenderableType]:
    brief = visible(req.request.icerc_full_text.strip())
    if check.state == "missing":
        return [Text("⚠ The model gave no ICERC brief for this call. Judge it by the action above.", style="laca.warn")]
    fields = brief_fields(brief)
    intent = " ".join((fields.get("intent") or brief).split())
    if check.state == "differs":
        claimed = " ".join(visible(check.claimed).split())
        flag: list[RenderableType] = [Text(f"⚠ THE MODEL'S BRIEF DOES NOT MATCH THE ACTION: it says `{claimed}`. "
                                           "Judge by the action above.", style="bold red")]
        return flag if compact else flag + [Text(brief, style="laca.brief")]  # compact: `v` shows the brief
    if check.state == "unnamed":
        return [Text("The brief does not name this action; judge by the action above. ", style="laca.warn")
                + Text(f"Intent: {intent}", style="laca.brief")]
    lead = "Brief (matches the action): " if check.state == "agrees" else "Brief: "
    return [Text(lead, style="laca.dim") + Text(intent, style="laca.brief")
            + Text("  (v shows it whole)", style="laca.dim")]


def _title(req: ApprovalRequest) -> str:
    """The same for every kind of call (a command, a file, a declared tool, an MCP tool): what it is and how
    the policy reads it; an MCP tool's server is named on the first line inside."""
    count = f" · call {req.index} of {req.total}" if req.total > 1 else ""
    return f"[bold]{visible(req.preview.title)}[/bold] · {LEVEL_WORD[req.level]}{count}"


def _line(text: str | Text, style: str = "", compact: bool = False) -> Text:
    """One part of the panel; `compact` keeps it to one row (cut with an ellipsis) so that a small terminal
    still shows the action, the verdict and the decisive reason."""
    out = Text(text, style=style) if isinstance(text, str) else text
    if compact:
        out.no_wrap, out.overflow = True, "ellipsis"
    return out


def _verdict(req: ApprovalRequest, compact: bool) -> list[RenderableType]:
    """The policy's reading beside the model's stated risk; a brief that claims low risk for a destructive or
    Dangerous call is flagged in red."""
    style = LEVEL_STYLE[req.level]
    line = Text(f"Policy: {LEVEL_WORD[req.level]}", style=f"bold {style}")
    risk = stated_risk(req)
    if risk:
        from framework_core.ui.render import one_line

        line.append(f"   Brief's risk: {visible(one_line(risk, 50))}", style="laca.dim")
    parts: list[RenderableType] = [_line(line, compact=compact)]
    mismatch = risk_mismatch(req)
    if mismatch:
        parts.append(_line(f"⚠ {visible(mismatch[0].upper() + mismatch[1:])}.", "bold red", compact))
    return parts


def approval_panel(req: ApprovalRequest, *, max_lines: int = 120, max_reasons: int = 8,
                   wrap: bool = True, compact: bool = False) -> RenderableType:
    style = LEVEL_STYLE[req.level]
    parts: list[RenderableType] = []
    if req.control_note:
        parts.append(_line(f"⚠ {visible(req.control_note)}", "bold red", compact))
    if req.server:
        parts.append(_line(f"Server: {visible(req.server)}   Tool: {visible(req.request.tool_name)}", "laca.info",
                           compact))
    hidden = 0
    if req.preview.body:
        body, hidden = fold_body(visible(req.preview.body), max_lines)
        if req.preview.lexer:
            parts.append(Syntax(body, req.preview.lexer, word_wrap=wrap, theme="ansi_dark", background_color="default"))
        else:
            parts.append(Text(body, no_wrap=not wrap, overflow="ellipsis"))
    if hidden or req.preview.full_body:
        more = f"… {hidden} more lines not shown here" if hidden else "Long values are folded"
        parts.append(_line(f"{more}: v shows all of it.", "laca.warn", compact))
    for note in req.preview.notes[:1] if compact else req.preview.notes:
        parts.append(_line(f"• {visible(note)}", "laca.warn", compact))
    brief = _brief_parts(req, check_brief(req), compact)
    parts += [_line(p, compact=compact) if isinstance(p, Text) else p for p in brief]
    parts += _verdict(req, compact)
    for reason in decisive_first(req)[:max_reasons]:
        parts.append(_line(f"  – {visible(reason)}", style, compact))
    if len(req.reasons) > max_reasons:
        parts.append(_line(f"  … and {len(req.reasons) - max_reasons} more (v shows them all)", style, compact))
    if req.sandbox_note:
        parts.append(_line(f"⛶ {req.sandbox_note}", "bold laca.warn" if req.sandbox_warn else "laca.dim", compact))
    if req.warning:
        parts.append(_line(req.warning, "bold laca.warn", compact))
    return Panel(Group(*parts), title=_title(req), title_align="left", border_style=style, expand=True)


def fitted_panel(req: ApprovalRequest, console: Console, rows: int) -> RenderableType:
    """The panel cut to at most `rows` terminal rows: the action's body and the reasons give way first, then
    every secondary line is kept to one row (and the body given back the rows that frees); never the title, the
    first lines of the action, the policy's verdict (with a risk mismatch) or the decisive reason."""
    body_lines = min(len((req.preview.body or "").splitlines()), 120)

    def build(lines: int, reasons: int, compact: bool = False) -> RenderableType:
        return approval_panel(req, max_lines=lines, max_reasons=reasons, wrap=lines > 3 or body_lines <= 3,
                              compact=compact)

    def fits(panel: RenderableType) -> bool:
        return len(console.render_lines(panel, console.options, pad=False)) <= rows

    panel = build(body_lines, 8)
    if fits(panel):
        return panel
    excess = len(console.render_lines(panel, console.options, pad=False)) - rows
    reasons = max(2, 8 - excess)
    for lines in (body_lines, max(3, body_lines - excess - 1), 3):  # the fold line takes a row
        panel = build(min(lines, body_lines), reasons)
        if fits(panel):
            return panel
    low, high = min(body_lines, 3), body_lines  # compact: as many lines of the action as then fit
    for reasons in (2, 1):
        if not fits(build(low, reasons, True)):
            continue
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if fits(build(mid, reasons, True)) else (low, mid - 1)
        return build(low, reasons, True)
    return build(min(body_lines, 3), 1, True)


def panel_rows(question: str, height: int) -> int:
    """The rows the panel may take on a terminal `height` rows tall: the question and its hint line stay on screen."""
    return max(8, height - question.count("\n") - 2)


def question_items(req: ApprovalRequest, width: int = 100) -> list[str]:
    """The answers on offer, each a key and what it does (the grant's label cut to fit `width`)."""
    from framework_core.ui.render import one_line

    if req.level == Level.DANGEROUS:
        items = ["y run this DANGEROUS action once", "n no (Enter)"]
    else:  # the same words, and the scope of `a` before answering, for every kind of call
        items = ["y once", "n no"]
        if req.allow_session:
            more = " (or a prefix)" if len(req.grant_options) > 1 else ""
            label, room = visible(req.grant_options[0].label), max(16, min(60, width - 26 - len(more)))
            if len(label) > room and width - 6 - len(more) > room:  # the scope on a row of its own, never cut short
                items.append(f"a always, this session:\n{one_line(label, width - 6 - len(more))}{more}")
            else:
                items.append(f"a always, this session: {one_line(label, room)}{more}")
    if req.remaining and req.level < Level.DANGEROUS:
        items.append(f"r yes to this and the {req.remaining} remaining that ask")
    if req.can_network:
        items.append("w yes, with network")
    items.append("v view all")
    if req.can_preview:
        items.append("p preview")
    if req.can_unsandbox:
        items.append("u outside the sandbox")
    items.append("Esc stop the turn")
    return items


def question_text(req: ApprovalRequest, width: int = 100) -> str:
    """`Allow? y once · n no · …` wrapped to `width`, the answer typed on the last line after `›`."""
    head = "Run this DANGEROUS action once?" if req.level == Level.DANGEROUS else "Allow?"
    lines, line = [], head
    for item in question_items(req, width):
        item, _, scope = item.partition("\n")  # a scope too long to share a row gets the next one to itself
        piece = f" · {item}" if line != head else f" {item}"
        if line and len(line) + len(piece) > max(width - 1, 30) and line != head:
            lines.append(line)
            line = "  " + item
        else:
            line += piece if line else "  " + item
        if scope:
            lines += [line, "    " + scope]
            line = ""
    if line:
        lines.append(line)
    return "\n".join(lines) + "\n› "


def question_keys(req: ApprovalRequest) -> str:
    keys = "yn" + ("a" if req.allow_session and req.level < Level.DANGEROUS else "")
    keys += "r" if req.remaining and req.level < Level.DANGEROUS else ""
    keys += "w" if req.can_network else ""
    return keys + "v" + ("p" if req.can_preview else "") + ("u" if req.can_unsandbox else "")
