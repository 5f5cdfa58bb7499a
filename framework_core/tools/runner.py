"""Run a bash command in its own process group with bounded memory, streamed output and timeouts."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, IO

CHUNK = 1024 * 1024
PIPE_SIZE = 1024 * 1024
EMIT_INTERVAL_S = 0.05


@dataclass
class CommandOutcome:
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    cancelled: bool
    duration_s: float
    total_bytes: int
    full_output_path: str | None


class _Capture:
    """Keeps the head and a rolling tail of one stream; spills everything to a file past the budget."""

    def __init__(self, budget: int, name: str, spill_dir: Path) -> None:
        self.half = max(budget // 2, 256)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.name = name
        self.spill_dir = spill_dir
        self.spill: IO[bytes] | None = None
        self.spill_path: str | None = None

    def add(self, data: bytes | memoryview) -> None:
        self.total += len(data)
        if self.spill is None and self.total > 2 * self.half:
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            fd, self.spill_path = tempfile.mkstemp(prefix=f"laca-{self.name}-", suffix=".log", dir=self.spill_dir)
            self.spill = os.fdopen(fd, "wb")
            self.spill.write(self.head)
            self.spill.write(self.tail)
        if self.spill is not None:
            self.spill.write(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if len(data) >= self.half:
            self.tail = bytearray(data[-self.half:])  # copy only what is kept, not the whole chunk
        elif data:
            self.tail += data
            if len(self.tail) > 2 * self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        if self.spill is not None:
            self.spill.close()
        kept_tail = bytes(self.tail[-self.half:]) if self.total > 2 * self.half else bytes(self.tail)
        cut = self.total - len(self.head) - len(kept_tail)
        head = bytes(self.head).decode("utf-8", errors="replace")
        tail = kept_tail.decode("utf-8", errors="replace")
        if cut <= 0:
            return head + tail
        note = (f"\n[… {cut:,} bytes cut from the middle ({self.total:,} bytes in all); "
                f"full {self.name} saved to {self.spill_path} …]\n")
        return head + note + tail


def _grow_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Larger pipe buffers mean far fewer reads for commands that print a lot (Linux only)."""
    try:
        import fcntl

        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
    except (ImportError, OSError):
        pass


def kill_group(proc: subprocess.Popen[bytes], grace_s: float = 1.0) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class _Emitter:
    """Coalesces output chunks into at most one `on_output` call per EMIT_INTERVAL_S (a slow UI never slows us)."""

    def __init__(self, on_output: Callable[[str], None] | None) -> None:
        self.on_output = on_output
        self.pending: list[bytes] = []
        self.size = 0
        self.last = 0.0

    def add(self, data: bytes | memoryview) -> None:
        room = 64 * 1024 - self.size  # the screen shows only a few lines anyway
        if self.on_output is not None and room > 0:
            self.pending.append(bytes(data[:room]))
            self.size += min(len(data), room)

    def flush(self, force: bool = False) -> None:
        if self.on_output is None or not self.pending:
            return
        if force or time.monotonic() - self.last >= EMIT_INTERVAL_S:
            self.on_output(b"".join(self.pending).decode("utf-8", errors="replace"))
            self.pending, self.size, self.last = [], 0, time.monotonic()


def _pump(proc: subprocess.Popen[bytes], caps: dict[str, _Capture], emitter: _Emitter, *, start: float,
          timeout_s: float, cancel: threading.Event | None) -> str:
    """Read both pipes until they close. Returns "done", "timeout" or "cancelled"."""
    assert proc.stdout and proc.stderr
    buffer = bytearray(CHUNK)  # one buffer reused for every read: no allocation per megabyte
    view = memoryview(buffer)
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
        sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
        exited_at: float | None = None
        while sel.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > 0.5:
                kill_group(proc, 0.2)  # the shell exited; background children holding the pipes go too
                return "done"
            if now - start > timeout_s:
                return "timeout"
            if cancel is not None and cancel.is_set():
                return "cancelled"
            for key, _ in sel.select(timeout=0.1):
                size = os.readv(key.fileobj.fileno(), [buffer])  # type: ignore[union-attr]
                if size:
                    caps[key.data].add(view[:size])
                    emitter.add(view[:size])
                    if size < CHUNK // 4 and caps[key.data].spill is not None:
                        time.sleep(0.001)  # a flood: let the pipe fill so that each read moves more
                else:
                    sel.unregister(key.fileobj)
            emitter.flush()
    return "done"


def run_command(command: str, *, cwd: Path, env: dict[str, str], timeout_s: float, budget_chars: int,
                cancel: threading.Event | None = None, on_output: Callable[[str], None] | None = None,
                spill_dir: Path | None = None, wrapper: list[str] | None = None,
                pass_fds: tuple[int, ...] = ()) -> CommandOutcome:
    """Run `bash -c command`, behind `wrapper` (the sandbox's argv prefix) when one is given."""
    spill_dir = spill_dir or Path(tempfile.gettempdir()) / "laca-output"
    start = time.monotonic()
    proc = subprocess.Popen([*(wrapper or []), "bash", "-c", command], cwd=str(cwd), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, pass_fds=pass_fds)
    _grow_pipes(proc)
    caps = {"stdout": _Capture(budget_chars, "stdout", spill_dir),
            "stderr": _Capture(budget_chars // 3, "stderr", spill_dir)}
    emitter = _Emitter(on_output)
    try:
        how = _pump(proc, caps, emitter, start=start, timeout_s=timeout_s, cancel=cancel)
    except KeyboardInterrupt:
        kill_group(proc)
        raise
    if how != "done":
        kill_group(proc)
    emitter.flush(force=True)
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        code = proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    out, err = caps["stdout"], caps["stderr"]
    return CommandOutcome(out.text(), err.text(), code if how == "done" else None, how == "timeout",
                          how == "cancelled", time.monotonic() - start, out.total + err.total,
                          out.spill_path or err.spill_path)
