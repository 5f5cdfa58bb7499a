"""Tie the process groups of running commands to LACA's lifetime.

A command runs in a process group of its own. If LACA is killed (`kill -9`, a crash, a closed terminal)
while one runs, nothing would stop that group: `PR_SET_PDEATHSIG` reaches only a direct child, not what
it started. So LACA starts, once, a tiny watcher in a session of its own that reads the ids of running
groups from a pipe only LACA holds. The kernel closes that pipe however LACA ends; the watcher then kills
every group still listed. Groups are listed when a command starts and struck off when it ends.

No moment is left uncovered: a command runs only once its group is listed (the gate in
`runner.start_tracked`), and a sandboxed command's whole PID namespace hangs on its init, which stays in that
group (`sandbox/plan.py`, "Lifetime"): killing the group ends everything the command started in the sandbox.
"""

from __future__ import annotations

import subprocess
import threading
from typing import IO

_SCRIPT = r"""
trap '' INT TERM HUP QUIT
groups=" "
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups${line#+} " ;;
    -*) groups="${groups/ ${line#-} / }" ;;
  esac
done
for g in $groups; do kill -KILL -- "-$g" 2>/dev/null; done
"""

_lock = threading.Lock()
_pipe: IO[bytes] | None = None
_watcher: subprocess.Popen[bytes] | None = None


def _send(line: str) -> None:
    global _pipe, _watcher
    with _lock:
        if _pipe is None:
            try:
                _watcher = subprocess.Popen(["bash", "-c", _SCRIPT], stdin=subprocess.PIPE,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            start_new_session=True)
            except OSError:
                return  # no watcher: commands still end with their call, only a kill of LACA is not covered
            _pipe = _watcher.stdin
        assert _pipe is not None
        try:
            _pipe.write(line.encode() + b"\n")
            _pipe.flush()
        except OSError:
            _pipe = None  # the watcher died; start another at the next command


def track(pgid: int) -> None:
    """A command's group started: kill it if LACA dies before `untrack`."""
    _send(f"+{pgid}")


def untrack(pgid: int) -> None:
    _send(f"-{pgid}")
