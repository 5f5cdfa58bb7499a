"""One-shot mode (`-p`): one turn, the answer on stdout, anything needing approval declined and reported on stderr.

--output-format text (the answer as it streams), json (one object at the end), stream-json (one event per line).
Exit codes: 0 ok, 1 runtime error or a reply cut off, 2 usage or config error, 3 a call was declined because it
needed an approval nobody could give (the result is still printed), 4 stopped by the tool-round limit or the loop
guard before the model finished, 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from framework_core.core.approval import ApprovalAnswer, ApprovalRequest, DeclineAllApprover
from framework_core.errors import ConfigError
from framework_core.core.events import (AssistantMessageDone, AssistantTextDelta, CoreEvent, Notice, RetryScheduled,
                                   ToolCallFinished)
from framework_core.ui.safe_text import visible, visible_reply

if TYPE_CHECKING:
    from framework_core.core.options import StartOptions
    from framework_core.ui.boot import Launcher


class ReportingDecliner(DeclineAllApprover):
    def approve(self, req: ApprovalRequest) -> ApprovalAnswer:
        body = visible(" ".join((req.preview.body or req.preview.title).split())[:200])
        print(f"laca: declined {req.request.tool_name} (needs approval; none possible with -p): {body}",
              file=sys.stderr)
        return super().approve(req)

    def review_changes(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        body = visible(" ".join((req.preview.body or req.preview.title).split())[:200])
        print(f"laca: dry run: {body} would make: {summary} (not applied)", file=sys.stderr)
        return super().review_changes(req, summary, diff)

    def review_held(self, req: ApprovalRequest, summary: str, diff: str) -> bool:
        body = visible(" ".join((req.preview.body or req.preview.title).split())[:200])
        print(f"laca: held (auto mode; needs approval, none possible with -p): {body} would make files that run "
              f"with nothing named: {summary} (not applied)", file=sys.stderr)
        return super().review_held(req, summary, diff)


def read_prompt(prompt: str) -> str:
    if prompt != "-":
        return prompt
    text = sys.stdin.read()
    if not text.strip():
        raise ConfigError("-p - read an empty prompt from stdin")
    return text


def run_oneshot(opts: "StartOptions", launcher: "Launcher") -> int:
    from framework_core.ui.headless import JsonReport

    fmt = opts.output_format
    text = read_prompt(opts.prompt or "")
    report = JsonReport(stream=fmt == "stream-json")
    calls: list[dict[str, Any]] = []
    cut: list[bool] = []  # a reply cut off after text was shown: the answer is incomplete
    shown = visible_reply if sys.stdout.isatty() else str  # a terminal gets no control sequences; a pipe gets the bytes

    def sink(event: CoreEvent) -> None:
        if fmt in ("json", "stream-json"):
            report(event)  # Claude Code's shapes: init, assistant, user (tool results), result
        if isinstance(event, AssistantTextDelta) and fmt == "text":
            sys.stdout.write(shown(event.text))
            sys.stdout.flush()
        elif isinstance(event, AssistantMessageDone) and fmt == "text" and event.message.content:
            sys.stdout.write("\n" if event.message.content.endswith("\n") else "\n\n")
        if isinstance(event, Notice):
            print(f"laca: {event.level}: {visible(event.text)}", file=sys.stderr)
        if isinstance(event, RetryScheduled) and fmt != "stream-json":  # a slow or failing server is not silent
            print(f"laca: {visible(event.reason)}; retrying in {event.delay_s:.1f}s (attempt {event.attempt + 1} of "
                  f"{event.max_attempts})", file=sys.stderr, flush=True)
        if isinstance(event, AssistantMessageDone) and event.cut_off and event.message.meta.get("cut_off"):
            cut.append(True)
        if isinstance(event, ToolCallFinished) and event.result.status == "dry_run":
            what = str(event.request.parameters.get("path") or event.request.parameters.get("command") or
                       event.request.tool_name)
            print(f"laca: dry run: {event.request.tool_name} {visible(what)[:200]} shown, not made", file=sys.stderr)
        if isinstance(event, ToolCallFinished) and event.note:  # an auto-run: said, with how to undo it
            what = str(event.request.parameters.get("command") or event.request.parameters.get("path") or
                       event.request.tool_name)
            print(f"laca: {visible(event.note)}: {visible(' '.join(what.split()))[:200]}", file=sys.stderr)
        if isinstance(event, ToolCallFinished):
            calls.append({"request": event.request.to_dict(), "result": event.result.to_dict(),
                          "duration_s": round(event.duration_s, 3)})

    decliner = ReportingDecliner()
    started = launcher.start_session(opts, events=sink, approver=decliner)
    facade = started.facade
    for note in started.notes:  # what the start has to say (the resumed session's recap is not shown with -p)
        print(f"laca: {note if isinstance(note, str) else note[0]}", file=sys.stderr)
    report.session_id, report.model = facade.session_id, facade.model
    report.init(facade)
    try:
        outcome = facade.turn(text)
    finally:
        closed = facade.close()
    if closed.problem and not facade.memory_only:  # a memory-only session was announced at start
        print(f"laca: error: session not saved: {closed.problem}", file=sys.stderr)
    if fmt in ("json", "stream-json"):
        report.emit(report.result(outcome, facade, cut_off=bool(cut), calls=calls))
    return exit_code(outcome.interrupted, outcome.error, bool(cut), declined=len(decliner.declined),
                     at_limit=outcome.stopped_at_limit)


EXIT_DECLINED = 3  # a call needed an approval nobody could give
EXIT_AT_LIMIT = 4  # the tool-round limit or the loop guard (the same call again) stopped the turn


def exit_code(interrupted: bool, error: str | None, cut_off: bool, *, declined: int = 0,
              at_limit: bool = False) -> int:
    """130 interrupted; 1 for an error or a reply cut off before its end (the answer is incomplete); 4 stopped by
    the tool-round limit or the loop guard; 3 a call declined for want of an approval; else 0."""
    if interrupted:
        return 130
    if error or cut_off:
        return 1
    if at_limit:
        return EXIT_AT_LIMIT
    return EXIT_DECLINED if declined else 0
