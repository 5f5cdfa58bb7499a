"""The sandbox one session uses: the profile in force, what this machine supports, and a plan per command.

`Sandbox.launch(...)` gives the executor the argv prefix and file descriptors for one command and cleans up
after it. Which workspace mode a command gets follows the policy's decision (see `plan.py`): Safe commands
see the workspace read-only; commands that may write get the overlay (or, where the file system cannot be
overlaid, the workspace itself with its control paths read-only); the network only when asked for.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Literal

from framework_core.sandbox.control import ControlPath, control_paths
from framework_core.sandbox.gate import Gate
from framework_core.sandbox.overlay_view import AfterTree
from framework_core.sandbox.hidden import Hidden, hidden_paths
from framework_core.sandbox.plan import Protected, SandboxPlan, WorkspaceMode, bwrap_argv
from framework_core.sandbox.probe import SandboxReport, probe, seccomp_fd

Profile = Literal["workspace-write", "read-only", "off"]
SERVER_SECCOMP_FD = 9  # where `sh` opens the filter file for bubblewrap in a server's wrapper
CACHE_S = 30.0  # how long the control-path scan and the hidden-path list are reused


@dataclass(frozen=True)
class Launch:
    """What the executor needs for one command. `argv` is empty when the command runs unsandboxed."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    mode: WorkspaceMode | None = None
    network: bool = False
    upper: Path | None = None
    started_ns: int = 0
    protected: tuple[ControlPath, ...] = ()
    dropped: list[str] = field(default_factory=list)  # control paths the command created, removed afterwards


@dataclass
class Sandbox:
    profile: Profile
    workspace: Path
    home: Path = field(default_factory=Path.home)
    protected_extra: tuple[str, ...] = ()
    max_apply_bytes: int = 0  # sandbox.max_apply_bytes: a change set with more bytes of files is not applied
    hidden_extra: tuple[str, ...] = ()
    laca_dirs: tuple[Path, ...] = ()
    use_overlay: bool = True
    bwrap: str | None = None  # None: find it (the bundled binary, then a system bwrap)
    _report: SandboxReport | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _runtime: Path | None = None
    _cache: dict = field(default_factory=dict)

    # ---- state ---------------------------------------------------------------------------------------
    @property
    def report(self) -> SandboxReport:
        with self._lock:
            if self._report is None:
                self._report = probe(self.bwrap)
            return self._report

    @property
    def active(self) -> bool:
        """Commands run confined. False for the `off` profile and where no sandbox can start."""
        return self.profile != "off" and self.report.available

    @property
    def overlay(self) -> bool:
        return self.active and self.use_overlay and self.report.overlay

    def is_complete(self) -> bool:
        """Everything auto mode relies on: commands confined, the workspace-write profile, an overlay (so what a
        command changes is read, gated and recorded for undo before it lands), and a workspace that is neither
        the home nor `/` (the overlay would then hold the whole home or system)."""
        if not (self.active and self.profile == "workspace-write" and self.overlay):
            return False
        workspace = self.workspace.resolve()
        return workspace != Path("/") and not getattr(self, "workspace_is_home", workspace == self.home.resolve())

    def describe(self) -> str:
        """A few words for the status line and the approval panel."""
        if self.profile == "off":
            return "sandbox off"
        if not self.report.available:
            return "NO SANDBOX"
        return "read-only sandbox" if self.profile == "read-only" else "sandboxed"

    def unavailable_notice(self) -> str | None:
        """Said once at start when a sandbox (or its overlay) was wanted but cannot run here."""
        if self.profile == "off":
            return None
        if self.report.available:
            if self.use_overlay and self.profile == "workspace-write" and not self.report.overlay:
                return ("The workspace cannot be overlaid here (" + (self.report.overlay_error or "unsupported")
                        + "): commands write to it directly, so /undo covers file writes only, and there is no "
                        "dry-run preview of commands.")
            return None
        return ("No sandbox on this machine (" + "; ".join(self.report.missing()) + "). Commands run "
                "unconfined, so every command that is not Safe will ask, rules and session grants included. "
                "`laca doctor` shows the details.")

    # ---- one command ---------------------------------------------------------------------------------
    def mode_for(self, *, writes: bool) -> WorkspaceMode:
        if self.profile == "read-only" or not writes:
            return "read-only"
        return "overlay" if self.overlay else "write"

    @contextmanager
    def launch(self, *, cwd: Path, writes: bool, network: bool, unsandboxed: bool = False) -> Iterator[Launch]:
        """Set up one command's sandbox; on exit, close descriptors and remove placeholders and scratch dirs."""
        if unsandboxed or not self.active:
            yield Launch([])
            return
        mode = self.mode_for(writes=writes)
        runtime = self._runtime_dir()
        scratch = Path(tempfile.mkdtemp(prefix="cmd-", dir=runtime))
        upper = work = None
        if mode == "overlay":
            upper, work = scratch / "upper", scratch / "work"
            upper.mkdir()
            work.mkdir()
        controls = self._controls() if mode != "read-only" else ()
        protected = tuple(Protected(str(self.workspace / c.rel), c.is_dir, True) for c in controls
                          if os.path.lexists(self.workspace / c.rel))
        missing = [self.workspace / c.rel for c in controls if not os.path.lexists(self.workspace / c.rel)]
        hidden = self._hidden()
        fd = seccomp_fd()
        plan = SandboxPlan(
            str(self.workspace), str(cwd), mode, network, tuple(h.path for h in hidden if h.is_dir),
            tuple(h.path for h in hidden if not h.is_dir), protected, str(self._empty_dir()),
            str(upper) if upper else None, str(work) if work else None, fd, run_dirs=_run_dirs(),
            reexposed=_reexposed())
        launch = Launch(bwrap_argv(self.report.bwrap or "bwrap", plan), (fd,) if fd is not None else (), mode,
                        network, upper, time.time_ns(), controls)
        try:
            yield launch
        finally:
            if fd is not None:
                os.close(fd)
            if mode == "write":  # and the control paths of repositories the command made
                known = {c.rel for c in controls}
                made = [self.workspace / c.rel for c in control_paths(self.workspace, self.protected_extra)
                        if c.rel not in known]
                launch.dropped.extend(_remove_created(missing + made, self.workspace, self.protected_extra))
            if mode != "overlay":
                shutil.rmtree(scratch, ignore_errors=True)

    def server_wrapper(self, *, network: bool, cwd: Path | None = None, write: bool = False,
                       roots: tuple[Path, ...] = ()) -> tuple[str, ...]:
        """The argv to put before a long-running server's command (stdio MCP servers): the same confinement as
        a command, with the workspace read-only, or with `write` writable in place (a server's changes cannot
        wait for it to exit: no overlay, no undo; the trust question says so), and with `write` the folders of
        its `roots:` setting writable too (never one that is, holds or lies in a hidden credential path), its
        package caches writable (uvx, npx), and the network unless the server's settings say no. The seccomp
        filter comes from a file through `sh`, because the process is started by the MCP SDK, not by us."""
        if not self.active:
            return ()
        controls = control_paths(self.workspace, self.protected_extra)
        protected = tuple(Protected(str(self.workspace / c.rel), c.is_dir, True) for c in controls
                          if os.path.lexists(self.workspace / c.rel))
        hidden = hidden_paths(self.home, self.hidden_extra, self.laca_dirs)
        caches = tuple(str(p) for p in (self.home / ".cache", self.home / ".npm") if p.is_dir())
        if write:  # the server's roots, with the workspace's access
            caches += tuple(str(r) for r in roots if r.is_dir() and not _near_hidden(r, hidden))
        filter_file = self._seccomp_file()
        plan = SandboxPlan(str(self.workspace), str(cwd or self.workspace), "write" if write else "read-only", network,
                           tuple(h.path for h in hidden if h.is_dir), tuple(h.path for h in hidden if not h.is_dir),
                           protected, str(self._empty_dir()), seccomp_fd=SERVER_SECCOMP_FD if filter_file else None,
                           run_dirs=_run_dirs(), writable=caches, reexposed=_reexposed())
        argv = bwrap_argv(self.report.bwrap or "bwrap", plan)
        if filter_file is None:
            return tuple(argv)
        return ("sh", "-c", f'exec "$@" {SERVER_SECCOMP_FD}<"$0"', str(filter_file), *argv)

    def _seccomp_file(self) -> Path | None:
        from framework_core.sandbox.seccomp import filter_for

        prog = filter_for()
        if prog is None:
            return None
        path = self._runtime_dir() / "seccomp.bpf"
        if not path.exists():
            path.write_bytes(prog)
        return path

    def discard(self, launch: Launch) -> None:
        """Drop an overlay's scratch directory once its change set has been applied or declined."""
        if launch.upper is not None:
            shutil.rmtree(launch.upper.parent, ignore_errors=True)

    def _controls(self) -> tuple[ControlPath, ...]:
        """Control paths, rescanned at most every CACHE_S: the scan walks the workspace for nested repositories.
        A stale list is safe in overlay mode, where every change is checked against control paths by pattern
        before it is applied; it only loses the early "read-only" error inside the command."""
        now = time.monotonic()
        cached = self._cache.get("controls")
        if cached is None or now - cached[0] > CACHE_S or not self.overlay:
            cached = (now, tuple(control_paths(self.workspace, self.protected_extra)))
            self._cache["controls"] = cached
        return cached[1]

    def _hidden(self) -> list:
        now = time.monotonic()
        cached = self._cache.get("hidden")
        if cached is None or now - cached[0] > CACHE_S:
            cached = (now, hidden_paths(self.home, self.hidden_extra, self.laca_dirs))
            self._cache["hidden"] = cached
        return cached[1]

    def _runtime_dir(self) -> Path:
        if self._runtime is None:
            self._runtime = Path(tempfile.mkdtemp(prefix="laca-sandbox-"))
        return self._runtime

    def _empty_dir(self) -> Path:
        empty = self._runtime_dir() / "empty"
        if not empty.exists():
            empty.mkdir(mode=0o555)
        return empty

    def close(self) -> None:
        if self._runtime is not None:
            shutil.rmtree(self._runtime, ignore_errors=True)
            self._runtime = None


PRIVATE_ROOTS = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")


def _reexposed() -> tuple[str, ...]:
    """LACA's own install and the Python running it, when they live in a folder each command gets empty (a venv
    under /tmp): read-only, so that the tools LACA itself starts (an MCP server from its venv) are found."""
    import sys

    install = Path(__file__).resolve().parents[2]
    out = []
    for path in dict.fromkeys([str(install), sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)]):
        path = os.path.realpath(path)
        if any(path == r or path.startswith(r + "/") for r in PRIVATE_ROOTS) and os.path.exists(path):
            out.append(path if os.path.isdir(path) else os.path.dirname(path))
    return tuple(dict.fromkeys(out))


def _run_dirs() -> tuple[str, ...]:
    """/run, and /var/run where it is a folder of its own rather than a link to /run."""
    extra = ("/var/run",) if os.path.isdir("/var/run") and not os.path.islink("/var/run") else ()
    return ("/run", *extra)


def _remove_created(paths: list[Path], workspace: Path, protected: tuple[str, ...] = ()) -> list[str]:
    """Control paths that did not exist before a direct-write command and do now: remove them unless the gate
    (`gate.py`) judges all of it data (a new repository's config and sample hooks as `git init` writes them).
    Only writeFile, which asks every time, may create the rest."""
    gate = Gate(AfterTree(None, workspace), str(workspace), tuple(protected))
    removed = []
    for path in paths:
        if not os.path.lexists(path):
            continue
        rel = path.relative_to(workspace).as_posix()
        if _all_data(gate, workspace, rel):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(rel)
        except OSError:
            pass
    return removed


def _all_data(gate: Gate, workspace: Path, rel: str) -> bool:
    """`rel` and, for a folder, everything in it is data or runs later (never control)."""
    stack = [rel]
    while stack:
        item = stack.pop()
        if gate.judge(item).verdict == "control":
            return False
        full = workspace / item
        if full.is_dir() and not full.is_symlink():
            stack += [f"{item}/{name}" for name in os.listdir(full)]
    return True


def _near_hidden(root: Path, hidden: list[Hidden]) -> bool:
    """A root that is, holds or lies in a hidden credential path is not bound: it would uncover the hidden."""
    return any(root == Path(h.path) or root in Path(h.path).parents or Path(h.path) in root.parents for h in hidden)
