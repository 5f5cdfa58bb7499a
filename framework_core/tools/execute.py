"""The one way a tool starts a process: inside the session's sandbox, through the bounded runner.

Bash commands and declared CLI tools both come here, so both get the process group, the timeout, the output
budget, the scrubbed environment and the sandbox profile chosen by the policy's decision.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from typing import TYPE_CHECKING, Any

from framework_core.tools.base import ToolContext
from framework_core.tools.runner import CommandOutcome, run_command

if TYPE_CHECKING:
    from framework_core.sandbox.changeset import ChangeSet
    from framework_core.sandbox.sandbox import Launch, Sandbox


@dataclass
class Executed:
    outcome: CommandOutcome
    sandbox: str  # "read-only", "overlay", "write" or "off"
    notes: list[str] = field(default_factory=list)  # why the sandbox stopped it, in plain words
    changes: str | None = None  # overlay mode: what landed in the workspace, in one line

    def result_data(self) -> dict[str, Any]:
        """The fields every process-running tool reports: output, exit code, time, what was cut, what the
        sandbox stopped and what changed."""
        out = self.outcome
        data: dict[str, Any] = {"stdout": out.stdout, "stderr": out.stderr, "exit_code": out.exit_code,
                                "duration_s": round(out.duration_s, 3)}
        if out.cut:
            data["cut"] = "; ".join(out.cut)
        if self.notes:
            data["sandbox"] = " ".join(self.notes)
        if self.changes is not None:
            data["changes"] = self.changes
        return data


def run_in_sandbox(command: str, ctx: ToolContext, *, cwd: Path) -> Executed:
    """Run `bash -c command` for a tool call, confined as `ctx.scope` and the sandbox profile say."""
    sandbox = ctx.sandbox
    scope = ctx.scope
    run = partial(run_command, command, cwd=cwd, env=ctx.env, timeout_s=ctx.settings.command_timeout_s,
                  budget_chars=ctx.result_budget(), on_output=ctx.on_output,
                  spill_dir=ctx.outputs_dir)
    if sandbox is None:
        return Executed(run(), "off")
    launch: Launch | None = None
    try:
        with sandbox.launch(cwd=cwd, writes=scope.writes, network=scope.network and not scope.preview,
                            unsandboxed=scope.unsandboxed) as launch:
            out = run(wrapper=launch.argv, pass_fds=launch.pass_fds)
        landed = land(launch, ctx, command) if launch.upper is not None else None
    finally:  # also on Ctrl-C: an interrupted command's overlay is dropped, nothing of it lands
        if launch is not None:
            sandbox.discard(launch)
    mode = launch.mode or "off"
    notes: list[str] = []
    if launch.mode is not None and out.stderr:  # `a; b` may exit 0 after the sandbox stopped `a`
        from framework_core.sandbox.denials import explain

        control = {c.rel: c.reason for c in launch.protected}
        notes = explain(out.stderr, workspace=sandbox.workspace, mode=launch.mode, network=launch.network,
                        control=control, profile=sandbox.profile)
    if launch.dropped:
        notes.append(dropped_note(launch.dropped))
    if landed is not None:
        notes += landed.notes
    return Executed(out, mode, notes, landed.line if landed else None)


@dataclass
class Landed:
    line: str  # "2 files changed, 1 file created", or why nothing was applied
    notes: list[str] = field(default_factory=list)


def land(launch: "Launch", ctx: ToolContext, label: str) -> Landed:
    """Read what the command changed in its overlay; have it reviewed when a preview was asked for; apply it
    with every touched path's pre-image saved in the undo store."""
    from framework_core.sandbox.changeset import ChangeSetError, apply, read_changes

    assert ctx.sandbox is not None and launch.upper is not None
    workspace = ctx.sandbox.workspace
    try:
        cs = read_changes(launch.upper, workspace, protected=[c.rel for c in launch.protected])
        late = _late_control_paths(cs, ctx.sandbox, launch.upper)
        if late:  # control paths the command itself created (a new nested repository's hooks)
            cs = read_changes(launch.upper, workspace, protected=[c.rel for c in launch.protected] + late)
    except ChangeSetError as exc:
        return Landed(f"nothing applied: {exc}")
    notes = [dropped_note([c.rel_path for c in cs.protected_attempts])] if cs.protected_attempts else []
    if not cs:
        return Landed("no files changed", notes)
    if ctx.scope.preview:
        review = ctx.review
        if review is None or not review(cs):
            return Landed(f"previewed, NOT applied: {cs.summary()}; the workspace is unchanged", notes)
    entry = ctx.undo.begin(label, "command") if ctx.undo is not None else None
    result = apply(cs, launch.upper, workspace, entry, started_ns=launch.started_ns)
    if result.notice:
        notes.append(result.notice)
    notes += result.notes()  # FIFOs, sockets and devices refused; setuid, setgid and sticky bits dropped
    return Landed(result.summary(), notes)

def _late_control_paths(cs: "ChangeSet", sandbox: "Sandbox", upper: Path) -> list[str]:
    """Changes at control paths that did not exist when the command started (so were not bound read-only)."""
    from framework_core.sandbox.control import control_reason, new_repo_allows

    created = {c.rel_path for c in cs.changes if c.rel_path.endswith(".git") and c.before == "absent"}
    late = []
    for c in cs.changes:
        if control_reason(sandbox.workspace / c.rel_path, sandbox.workspace, sandbox.protected_extra) is None:
            continue
        if not new_repo_allows(c.rel_path, created, upper / c.rel_path):
            late.append(c.rel_path)
    return late


def dropped_note(paths: list[str]) -> str:
    return (f"not kept: {', '.join(paths)} (control paths: something runs them later, outside the sandbox). "
            "Only a writeFile the user approves, asked every time, may create one.")


def argv_command(argv: list[str]) -> str:
    """An argv list as one bash command line that runs exactly those words (no expansion of any of them)."""
    return shlex.join(argv)
