"""Run a bash command in its own process group with bounded memory, streamed output and timeouts."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, IO

if TYPE_CHECKING:
    from framework_core.tools.result_budget import Bounded
    from framework_core.tools.spill import OutputLimits

CHUNK = 1024 * 1024
PIPE_SIZE = 1024 * 1024
EMIT_INTERVAL_S = 0.05


@dataclass
class CommandOutcome:
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    duration_s: float
    total_bytes: int
    full_output_path: str | None
    stopped: str | None = None  # why LACA stopped it early besides a timeout or Ctrl-C, in plain words
    cut: tuple[str, ...] = ()  # what the one result budget left out of each stream, in a few words


TTY_MARKERS = (b"Output is not to a terminal", b"Input is not from a terminal")  # vim, vi, view, vimdiff …
TTY_GRACE_S = 4.0  # `vim -c wq f` warns too, then finishes; a real wait for keys goes on past this


class _Capture:
    """Keeps the head and a rolling tail of one stream; past the budget, saves everything to a file in the
    session's output folder, within the session's disk budget. A write error on that file sets `error`:
    the caller stops the command rather than let it fill the disk."""

    def __init__(self, budget: int, name: str, spill_dir: Path | None, limits: "OutputLimits | None" = None) -> None:
        self.half = max(budget // 2, 256)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.name = name
        self.spill_dir = spill_dir
        self.limits = limits
        self.spill: IO[bytes] | None = None
        self.spill_path: str | None = None
        self.error: str | None = None  # the spill file could not be written: stop the command
        self.unsaved: str | None = None  # why the full output is not (all) saved
        self.tty_since: float | None = None  # when the program said it has no terminal

    def _open_spill(self) -> None:
        if self.spill_dir is None:
            self.unsaved = "LACA has no writable folder for it"
            return
        try:
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            fd, self.spill_path = tempfile.mkstemp(prefix=f"laca-{self.name}-", suffix=".log", dir=self.spill_dir)
        except OSError as exc:
            self.error = f"could not save the full {self.name} in {self.spill_dir}: {exc.strerror or exc}"
            return
        self.spill = os.fdopen(fd, "wb")
        self._save(bytes(self.head) + bytes(self.tail))

    def _save(self, data: bytes | memoryview) -> None:
        assert self.spill is not None
        if self.limits is not None and not self.limits.budget.take(len(data)):
            mb = self.limits.budget.limit / 1e6
            self.unsaved = (f"only its first {self.spill.tell():,} bytes were saved: the session's budget for saved "
                            f"output ({mb:,.0f} MB, teps_settings.output_session_max_bytes) is used up")
            self._close_spill()
            return
        try:
            self.spill.write(data)
        except OSError as exc:
            self.error = f"could not save the full {self.name} to {self.spill_path}: {exc.strerror or exc}"
            self._close_spill(remove=True)  # give back the disk it took

    def _close_spill(self, remove: bool = False) -> None:
        spill, self.spill = self.spill, None
        if spill is not None:
            try:
                spill.close()
            except OSError as exc:  # the last buffered bytes did not fit
                self.unsaved = self.unsaved or f"the saved copy is incomplete ({exc.strerror or exc})"
        if remove and self.spill_path:
            try:
                os.unlink(self.spill_path)
            except OSError:
                pass
            self.unsaved, self.spill_path = self.error, None

    def add(self, data: bytes | memoryview) -> None:
        self.total += len(data)
        if self.spill is None and self.spill_path is None and self.unsaved is None and self.error is None \
                and self.total > 2 * self.half:
            self._open_spill()
        if self.spill is not None:
            self._save(data)
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

    def needs_tty(self) -> bool:
        """The program said it has no terminal and went on waiting past the grace period."""
        if self.tty_since is None and self.total <= 4096 and any(m in self.head for m in TTY_MARKERS):
            self.tty_since = time.monotonic()
        return self.tty_since is not None and time.monotonic() - self.tty_since > TTY_GRACE_S

    def view(self, share: int) -> "Bounded":
        """What the model gets of this stream within `share` characters, through the one result budget: the
        saved whole paged by line, or what was kept in memory when it could not be saved."""
        from framework_core.tools.result_budget import bound, bound_file, bound_pieces, saver

        self._close_spill()
        if self.total <= 2 * self.half:  # all of it is in memory; saved only if the share cuts it
            text = (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
            return bound(text, share, saver(self.spill_dir, f"laca-{self.name}") if self.spill_dir else None)
        if self.spill_path and not self.unsaved:
            try:
                return bound_file(self.spill_path, share)
            except OSError as exc:
                self.unsaved = f"its saved copy cannot be read ({exc.strerror or exc})"
        where = f"only partly saved in {self.spill_path}" if self.spill_path else "not saved"
        return bound_pieces(bytes(self.head), bytes(self.tail[-self.half:]), self.total, share,
                            note=f"the full {self.name} was {where}: {self.unsaved}")


def shares(sizes: list[int], budget: int) -> list[int]:
    """Split one result's budget between streams: a stream needing less than an even share gets all it needs,
    the others share the rest."""
    out = [0] * len(sizes)
    left = budget
    for k, i in enumerate(sorted(range(len(sizes)), key=lambda j: sizes[j])):
        out[i] = min(sizes[i], left // (len(sizes) - k))
        left -= out[i]
    return out


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


def _stop_reason(caps: dict[str, _Capture], max_bytes: int | None) -> str | None:
    """Why the command must stop now although it still runs: too much output, no disk, no terminal."""
    if max_bytes is not None and caps["stdout"].total + caps["stderr"].total > max_bytes:
        return "capped"
    if caps["stdout"].error or caps["stderr"].error:
        return "spill_error"
    if caps["stderr"].needs_tty() or caps["stdout"].needs_tty():
        return "needs_tty"
    return None


def _pump(proc: subprocess.Popen[bytes], caps: dict[str, _Capture], emitter: _Emitter, *, start: float,
          timeout_s: float, max_bytes: int | None = None) -> str:
    """Read both pipes until they close. Returns "done", "timeout" or a `_stop_reason`."""
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
            stop = _stop_reason(caps, max_bytes)
            if stop is not None:
                return stop
            for key, _ in sel.select(timeout=0.1):
                size = os.readv(key.fd, [buffer])
                if size:
                    caps[key.data].add(view[:size])
                    emitter.add(view[:size])
                    if size < CHUNK // 4 and caps[key.data].spill is not None:
                        time.sleep(0.001)  # a flood: let the pipe fill so that each read moves more
                else:
                    sel.unregister(key.fileobj)
            emitter.flush()
    return "done"


# POSIX sh, by absolute path: it runs outside any sandbox, so no startup file, no PATH lookup, no imported function
GATE = ("/bin/sh", "-c", 'command read _ || exit 125; exec "$@" </dev/null', "laca-gate")


def start_tracked(argv: list[str], *, cwd: Path, env: dict[str, str], pass_fds: tuple[int, ...] = ()
                  ) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session (no controlling terminal: the sandbox needs no `--new-session` of its own,
    plan.py "Lifetime") whose group the reaper kills if LACA dies. It starts behind a gate that waits for
    LACA's word on its stdin, given once the group is tracked: a LACA killed in between closes the pipe and the
    command never runs (the gate exits 125), so no moment exists where it runs untracked."""
    from framework_core.tools import reaper

    gate_r, gate_w = os.pipe()
    try:
        proc = subprocess.Popen([*GATE, *argv], cwd=str(cwd), env=env, stdin=gate_r, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, pass_fds=pass_fds)
    except BaseException:
        os.close(gate_w)
        raise
    finally:
        os.close(gate_r)
    reaper.track(proc.pid)  # killed with LACA if LACA dies first
    try:
        os.write(gate_w, b"go\n")
    except OSError:
        pass  # the gate is gone already (killed): the command did not run, its exit status says so
    finally:
        os.close(gate_w)
    return proc


def run_command(command: str, *, cwd: Path, env: dict[str, str], timeout_s: float, budget_chars: int,
                on_output: Callable[[str], None] | None = None,
                spill_dir: Path | None = None, limits: "OutputLimits | None" = None, wrapper: list[str] | None = None,
                pass_fds: tuple[int, ...] = ()) -> CommandOutcome:
    """Run `bash -c command`, behind `wrapper` (the sandbox's argv prefix) when one is given."""
    from framework_core.tools import reaper, spill

    limits = limits or spill.default_limits()
    spill_dir = spill_dir or limits.spill_dir  # the session's own folder, not the shared /tmp
    start = time.monotonic()
    proc = start_tracked([*(wrapper or []), "bash", "-c", command], cwd=cwd, env=env, pass_fds=pass_fds)
    _grow_pipes(proc)
    caps = {"stdout": _Capture(budget_chars, "stdout", spill_dir, limits),
            "stderr": _Capture(budget_chars, "stderr", spill_dir, limits)}
    emitter = _Emitter(on_output)
    try:
        how = _pump(proc, caps, emitter, start=start, timeout_s=timeout_s, max_bytes=limits.max_bytes)
    except KeyboardInterrupt:
        kill_group(proc)
        reaper.untrack(proc.pid)
        raise
    if how == "done":
        how = _wait_exit(proc, start=start, timeout_s=timeout_s)  # it closed its pipes but runs on
    kill_group(proc, 0.2 if how == "done" else 1.0)  # background children (`cmd &`) end with their call
    emitter.flush(force=True)
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        code = proc.wait()
    reaper.untrack(proc.pid)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    out, err = caps["stdout"], caps["stderr"]
    views = [c.view(n) for c, n in zip((out, err), shares([out.total, err.total], budget_chars), strict=True)]
    cut = tuple(f"{name} cut: {v.summary()}" for name, v in zip(("stdout", "stderr"), views, strict=True) if v.cut)
    return CommandOutcome(views[0].text, views[1].text, code if how == "done" else None, how == "timeout",
                          time.monotonic() - start, out.total + err.total,
                          out.spill_path or err.spill_path or views[0].saved_path or views[1].saved_path,
                          _stopped_note(how, caps, limits), cut)


def _wait_exit(proc: subprocess.Popen[bytes], *, start: float, timeout_s: float) -> str:
    while True:
        try:
            proc.wait(timeout=0.1)
            return "done"
        except subprocess.TimeoutExpired:
            if time.monotonic() - start > timeout_s:
                return "timeout"


def _stopped_note(how: str, caps: dict[str, _Capture], limits: "OutputLimits") -> str | None:
    if how == "capped":
        return (f"stopped after {limits.max_bytes / 1e6:,.0f} MB of output (teps_settings.output_max_bytes); "
                "filter the output or redirect it to a file")
    if how == "spill_error":
        return "stopped: " + (caps["stdout"].error or caps["stderr"].error or "its output could not be saved")
    if how == "needs_tty":
        return ("stopped: it needs an interactive terminal, which commands run by LACA do not have; use a "
                "non-interactive form (e.g. sed or writeFile instead of an editor)")
    return None
