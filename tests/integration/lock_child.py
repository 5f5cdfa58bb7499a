"""One LACA session in a child process, for the one-writer-per-workspace test: it waits for a start file, runs
one sandboxed command that writes 1,000 files into the workspace, and prints its result as JSON.

python -m tests.integration.lock_child WORKSPACE HOME GO_FILE READY_FILE TAG
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main(ws: Path, home: Path, go: Path, ready: Path, tag: str) -> None:
    from framework_core.core.approval import ScriptedApprover
    from framework_core.policy.decide import PolicyState
    from framework_core.policy.rules import RuleSet
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.teps import TEPSEngine

    box = Sandbox("workspace-write", ws.resolve(), home=home, use_overlay=True)
    teps = TEPSEngine({}, workspace=ws, approver=ScriptedApprover(["y"]), sandbox=box,
                      env={"PATH": os.environ["PATH"], "HOME": str(home)},
                      policy=PolicyState(rules=RuleSet(), allow_dangerous=True))
    teps.warm_up()
    notices: list[str] = []
    teps.events = lambda event: notices.append(getattr(event, "message", "")) if type(event).__name__ == "Notice" \
        else None
    ready.write_text("ready")
    while not go.exists():
        time.sleep(0.01)
    command = f"for i in $(seq 1000); do echo {tag} > f$i; done; sleep 1"
    result = teps.execute_tool({"request_id": "r1", "tool_name": "executeBashCommand",
                                "parameters": {"command": command}, "icerc_full_text": "write 1,000 files"})
    print(json.dumps({"status": result["status"], "data": result["data"], "notices": notices}, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[5])
