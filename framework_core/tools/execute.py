"""The one way a tool starts a process: inside the session's sandbox, through the bounded runner.

Bash commands and declared CLI tools both come here, so both get the process group, the timeout, the output
budget, the environment by allowlist and the sandbox profile chosen by the policy's decision. What happens in the
sandbox (the overlay, its change set, the gate, the apply and its undo entry) is one transaction
(`sandbox/transaction.py`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from framework_core.errors import ToolError
from framework_core.tools.base import ToolContext
from framework_core.tools.runner import CommandOutcome, run_command


@dataclass
class Executed:
    outcome: CommandOutcome
    sandbox: str  # "read-only", "overlay", "write" or "off"
    notes: list[str] = field(default_factory=list)  # why the sandbox stopped it, in plain words
    changes: str | None = None  # overlay mode: what landed in the workspace, in one line
    not_applied: str | None = None  # the command changed files and none of it landed: why

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

    def raise_if_not_applied(self, data: dict[str, Any]) -> None:
        """A change set that did not land never reads as ok: the call's result is an error saying so."""
        if self.not_applied is not None:
            why = re.sub(r"^(not applied|nothing applied):\s*", "", self.not_applied, flags=re.I)
            raise ToolError(f"the command ran (exit {self.outcome.exit_code}) but its changes were NOT applied: "
                            f"{why}", data=data)


def run_in_sandbox(command: str, ctx: ToolContext, *, cwd: Path) -> Executed:
    """Run `bash -c command` for a tool call, confined as `ctx.scope` and the sandbox profile say."""
    run = partial(run_command, command, cwd=cwd, env=ctx.env, timeout_s=ctx.settings.command_timeout_s,
                  budget_chars=ctx.result_budget(), on_output=ctx.on_output,
                  spill_dir=ctx.outputs_dir)
    if ctx.sandbox is None:
        return Executed(run(), "off")
    from framework_core.sandbox.transaction import SandboxTransaction

    scope = ctx.scope
    ran = SandboxTransaction(ctx.sandbox, cwd, writes=scope.writes, network=scope.network,
                             unsandboxed=scope.unsandboxed, preview=scope.preview, undo=ctx.undo,
                             review=ctx.review, label=command, hold=scope.hold
                             ).run(lambda argv, fds: run(wrapper=argv, pass_fds=fds))
    out = ran.result
    landed = ran.landed
    not_applied = landed.line if landed is not None and not landed.applied else None
    return Executed(out, ran.mode, ran.notes(out.stderr), landed.line if landed else None, not_applied)


def argv_command(argv: list[str]) -> str:
    """An argv list as one bash command line that runs exactly those words (no expansion of any of them)."""
    return shlex.join(argv)
