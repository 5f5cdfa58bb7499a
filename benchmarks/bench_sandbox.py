"""Added time per command from the OS sandbox: the same `true` through the runner, sandboxed and not.

Both modes of a command that changes nothing are measured: Safe (workspace read-only) and one that may write
(workspace writable; the overlay once it is on). Target: at most 10 ms added at the median.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, interleaved


def measure() -> list[Row]:
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.tools.runner import run_command

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp}
        sandbox = Sandbox("workspace-write", ws, use_overlay=True)
        if not sandbox.active:
            return [Row("sandbox: added time per command", float("nan"), None, "ms", "≤ 10 ms", None,
                        note="no sandbox on this machine: " + "; ".join(sandbox.report.missing()))]

        def plain() -> float:
            start = time.perf_counter()
            run_command("true", cwd=ws, env=env, timeout_s=10, budget_chars=10_000)
            return time.perf_counter() - start

        for label, writes in (("Safe, workspace read-only", False), ("may write, workspace overlay", True)):
            def boxed(writes: bool = writes) -> float:
                start = time.perf_counter()
                with sandbox.launch(cwd=ws, writes=writes, network=False) as launch:
                    run_command("true", cwd=ws, env=env, timeout_s=10, budget_chars=10_000, wrapper=launch.argv,
                                pass_fds=launch.pass_fds)
                sandbox.discard(launch)
                return time.perf_counter() - start

            ours, base = interleaved(boxed, plain, 41)
            added = (ours - base) * 1000
            rows.append(Row(f"sandbox: added per command ({label})", added, None, "ms", "≤ 10 ms", added <= 10,
                            note=f"sandboxed {ours * 1000:.1f} ms vs direct {base * 1000:.1f} ms"))
        sandbox.close()
    return rows
