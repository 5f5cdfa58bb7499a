"""The sandbox one session uses: the profile in force, what this machine supports, and a plan per command.

`Sandbox.launch(...)` gives the executor the argv prefix and file descriptors for one command and cleans up
after it. Which workspace mode a command gets follows the policy's decision (see `plan.py`): Safe commands
see the workspace read-only; commands that may write get the overlay (or, where the file system cannot be
overlaid, the workspace itself with its control paths read-only); the network only when asked for. What a
command sees of the home is `home_setup.py`'s; what a long-running server's sandbox adds, `server_mounts.py`'s.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Literal

from framework_core.sandbox.control import ControlPath, control_paths
from framework_core.sandbox.hidden import HOME_SECRETS, Hidden, hidden_paths
from framework_core.sandbox.home import HomeAllow, HomeView
from framework_core.sandbox.home_setup import CACHE_S, HomeSetup
from framework_core.sandbox.reuse import Spare, clear_volatile, overlay_pristine
from framework_core.sandbox.direct_write import changed_since, remove_created
from framework_core.sandbox.home_links import home_links
from framework_core.sandbox.workspace_secrets import Secret, SecretScan, sanitised_copy
from framework_core.sandbox.plan import Protected, SandboxPlan, WorkspaceMode, bwrap_argv
from framework_core.sandbox.probe import SandboxReport, probe, seccomp_fd
from framework_core.sandbox.server_mounts import root_mounts, seccomp_file
from framework_core.sandbox.view import Hide
from framework_core.sandbox.view_inputs import (etc_copy, etc_signature, install_root, passwd_home, runs_from,
                                                 system_entries)
from framework_core.sandbox.scratch import default_candidates, drop, overlay_home

Profile = Literal["workspace-write", "read-only", "off"]
SERVER_SECCOMP_FD = 9  # where `sh` opens the filter file for bubblewrap in a server's wrapper


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
    notes: list[str] = field(default_factory=list)  # said with the result (what was written to the home, lost)
    home: HomeView | None = None  # what the command saw of the home (None: the whole home, read-only)
    secrets: tuple[Secret, ...] = ()  # workspace files shaped like credentials, shown empty or sanitised


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
    home_allow: HomeAllow | None = None  # None: the shipped list (home_allow.yaml)
    cache_root: Path | None = None  # where the commands' caches live; None: `sandbox-home` in LACA's cache dir
    secrets_visible: tuple[str, ...] = ()  # workspace secret files commands may see (sandbox.workspace_secrets_visible)
    overlay_dirs: tuple[Path, ...] | None = None  # where overlays may go (scratch.py); None: LACA's state folder
    _report: SandboxReport | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _runtime: Path | None = None
    _cache: dict = field(default_factory=dict)
    _spare: Spare = field(default_factory=Spare)  # an overlay's folder left as new, for the next overlay
    _homes: HomeSetup = field(init=False)

    def __post_init__(self) -> None:
        self._homes = HomeSetup(self.home, self.workspace, self._runtime_dir, self.home_allow, self.cache_root)

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

    @property
    def workspace_is_home(self) -> bool:
        """The workspace is the home, `/`, or a folder holding the home: an overlay there would land in the
        user's dotfiles, so commands see it read-only."""
        ws, home = os.path.realpath(self.workspace), os.path.realpath(self.home)
        return ws == "/" or ws == home or home.startswith(ws.rstrip("/") + "/")

    def is_complete(self) -> bool:
        """Everything auto mode relies on: commands confined, the workspace-write profile, an overlay (so what a
        command changes is read, gated and recorded for undo before it lands), and a workspace that is neither
        the home nor `/` (the overlay would then hold the whole home or system)."""
        return self.active and self.profile == "workspace-write" and self.overlay and not self.workspace_is_home

    def home_notice(self) -> str | None:
        """Said once at start when the workspace is the home or `/`."""
        if not self.active or self.profile == "read-only" or not self.workspace_is_home:
            return None
        return (f"The workspace ({self.workspace}) is your home folder or holds it: commands see it read-only, so "
                "nothing they do lands in your dotfiles. Only a command you run outside the sandbox ([u], asked "
                "every time) can write there; start LACA in a project folder to work normally.")

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

    def warm_up(self) -> None:
        """Do now what the first command would otherwise wait for: the probe of this machine, the home's mounts
        (its sanitised copies written, its caches made) and the workspace's scans, each kept as `launch` keeps
        them."""
        if not self.active:
            return
        self._homes.view()
        self._hidden()
        if self.profile != "read-only":
            self._controls()
        if "secrets" not in self._cache:
            self._cache["secrets"] = (time.monotonic(), SecretScan.of(self.workspace, self.secrets_visible))

    # ---- one command ---------------------------------------------------------------------------------
    def mode_for(self, *, writes: bool) -> WorkspaceMode:
        if self.profile == "read-only" or not writes or self.workspace_is_home:
            return "read-only"
        return "overlay" if self.overlay else "write"

    @contextmanager
    def launch(self, *, cwd: Path, writes: bool, network: bool, unsandboxed: bool = False) -> Iterator[Launch]:
        """Set up one command's sandbox; on exit, close descriptors and remove placeholders and scratch dirs."""
        if unsandboxed or not self.active:
            yield Launch([])
            return
        mode = self.mode_for(writes=writes)
        scratches: list[Path] = []  # the command's own folder, made when needed: the overlay's, sanitised copies
        launch, missing, scratch_home = self._prepare(cwd, mode, network, scratches)
        try:
            yield launch
        finally:
            self._finish(launch, missing, scratch_home, scratches)

    def _prepare(self, cwd: Path, mode: WorkspaceMode, network: bool,
                 scratches: list[Path]) -> tuple[Launch, list[Path], Path | None]:
        """One command's folders, mounts and argv; also the control paths it may create (absent now) and the
        folder bound as its home, for `_finish`."""
        def scratch() -> Path:
            if not scratches:
                scratches.append(Path(tempfile.mkdtemp(prefix="cmd-", dir=self._overlay_dir() if mode == "overlay"
                                                       else self._runtime_dir())))
            return scratches[0]

        upper = work = None
        if mode == "overlay":
            upper, work = self._take_overlay(scratches)
        controls = self._controls() if mode != "read-only" else ()
        named = [ControlPath(rel, why, (self.workspace / rel).is_dir()) for rel, why in self.git_named().items()]
        protected = self._protected([*controls, *named] if mode != "read-only" else controls)
        missing = [self.workspace / c.rel for c in controls if not os.path.lexists(self.workspace / c.rel)]
        hidden = self._hidden()
        view = self._homes.view()
        scratch_home = self._homes.take(view)
        secrets, masks = self._secret_masks(scratch)
        fd = seccomp_fd()
        home_plan = self._homes.plan(view, str(scratch_home or ""))
        plan = SandboxPlan(
            str(self.workspace), str(cwd), mode, network, _hides(hidden), protected,
            str(upper) if upper else None, str(work) if work else None, fd, run_dirs=_run_dirs(),
            system=self._system(), masks=masks, guarded=self._guarded(hidden, masks, view is not None),
            volatile=self.report.volatile if mode == "overlay" else None,
            new_session=False,  # the runner starts it in a new session
            **home_plan)
        try:
            argv = bwrap_argv(self.report.bwrap or "bwrap", plan)
        except Exception:
            if fd is not None:
                os.close(fd)
            if scratch_home is not None:
                drop(scratch_home)
            raise
        launch = Launch(argv, (fd,) if fd is not None else (), mode, network, upper, time.time_ns(), controls,
                        home=view, secrets=secrets)
        return launch, missing, scratch_home

    def _finish(self, launch: Launch, missing: list[Path], scratch_home: Path | None, scratches: list[Path]) -> None:
        """After one command: close its seccomp descriptor, give its home back (noting what it wrote there),
        remove the control paths it created in write mode, and drop its scratch folder (an overlay's stays until
        `discard`)."""
        for fd in launch.pass_fds:
            os.close(fd)
        if launch.home is not None and scratch_home is not None:
            launch.notes.extend(self._homes.give_back(scratch_home, launch.home))
        if launch.mode == "write":
            self._drop_created(launch, missing)
        if launch.mode != "overlay" and scratches:
            drop(scratches[0])

    def _drop_created(self, launch: Launch, missing: list[Path]) -> None:
        """Write mode: remove the control paths absent before the command and those of repositories it made."""
        known = {c.rel for c in launch.protected}
        made = [self.workspace / c.rel for c in control_paths(self.workspace, self.protected_extra)
                if c.rel not in known]
        made += [self.workspace / rel for rel in changed_since(self.workspace, launch.started_ns)]
        launch.dropped.extend(remove_created(list(dict.fromkeys(missing + made)), self.workspace,
                                              (*self.protected_extra, *self.git_named())))

    def _protected(self, controls: tuple[ControlPath, ...] | list[ControlPath]) -> tuple[Protected, ...]:
        """The control paths that exist, bound read-only over the workspace."""
        return tuple(Protected(str(self.workspace / c.rel), c.is_dir, True) for c in controls
                     if os.path.lexists(self.workspace / c.rel))

    def _take_overlay(self, scratches: list[Path]) -> tuple[Path, Path]:
        """An overlay's upper and work folders: those the last overlay left as new (`overlay_pristine`), else new."""
        spare = self._spare.take()
        if spare is not None and overlay_pristine(spare, self._cache.get("upper-mode", -1)):
            scratches.append(spare)
            return spare / "upper", spare / "work"
        if spare is not None:
            drop(spare)
        scratch = Path(tempfile.mkdtemp(prefix="cmd-", dir=self._overlay_dir()))
        scratches.append(scratch)
        upper, work = scratch / "upper", scratch / "work"
        upper.mkdir()
        work.mkdir()
        self._cache["upper-mode"] = os.lstat(upper).st_mode
        return upper, work

    def server_wrapper(self, *, network: bool, cwd: Path | None = None, write: bool = False,
                       roots: tuple[Path, ...] = (), program: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The argv to put before a long-running server's command (stdio MCP servers): the same confinement as
        a command, with the workspace read-only, or with `write` writable in place (a server's changes cannot
        wait for it to exit: no overlay, no undo; the trust question says so), the same home as a command's
        (LACA's package caches writable, so `uvx` and `npx -y` work from empty caches; the servers' own caches,
        which commands cannot write), the folders of its
        `roots:` setting with the workspace's access (see `server_mounts.py`), what `program` (its command line)
        runs from (`view_inputs.runs_from`: a venv, the script's folder) read-only, and the network unless the
        server's settings say no. The seccomp
        filter comes from a file through `sh`, because the process is started by the MCP SDK, not by us."""
        if not self.active:
            return ()
        protected = self._protected(control_paths(self.workspace, self.protected_extra))
        hidden = self._hidden()
        filter_file = seccomp_file(self._runtime_dir())
        writable = write and not self.workspace_is_home and self.profile != "read-only"
        masks = self._secret_masks(self._runtime_dir)[1]
        view = self._homes.view(servers=True)
        mounts = root_mounts(self._homes.plan(view, ""), roots, writable, home=self.home,
                             secrets=hidden_paths(self.home, self.hidden_extra, self.laca_dirs, HOME_SECRETS))
        plan = SandboxPlan(str(self.workspace), str(cwd or self.workspace), "write" if writable else "read-only",
                           network, _hides(hidden), protected, seccomp_fd=SERVER_SECCOMP_FD if filter_file else None,
                           run_dirs=_run_dirs(), system=self._system(), masks=masks,
                           guarded=self._guarded(hidden, masks, view is not None),
                           **{**mounts, "read_only": runs_from(program) + mounts.get("read_only", ())})
        argv = bwrap_argv(self.report.bwrap or "bwrap", plan)
        if filter_file is None:
            return tuple(argv)
        return ("sh", "-c", f'exec "$@" {SERVER_SECCOMP_FD}<"$0"', str(filter_file), *argv)

    def discard(self, launch: Launch) -> None:
        """Drop an overlay's scratch directory once its change set has been applied or declined; one left as new
        (nothing changed, nothing landed) serves the next overlay instead (`reuse.py`)."""
        if launch.upper is None:
            return
        scratch = launch.upper.parent
        unused: Path | None = scratch
        clear_volatile(scratch)
        if overlay_pristine(scratch, self._cache.get("upper-mode", -1)):
            try:
                launch.upper.mkdir(exist_ok=True)
                unused = self._spare.keep(scratch)
            except OSError:
                pass
        if unused is not None:
            drop(unused)

    def _secret_masks(self, scratch: Callable[[], Path]) -> tuple[tuple[Secret, ...], tuple[tuple[str, str], ...]]:
        """The workspace's secret files (`workspace_secrets.py`) and what each is shown as: /dev/null, or a copy
        without credentials written into `scratch`. The last scan serves while every folder it read is unchanged
        (`SecretScan.holds`: no file made, removed or renamed there), and for CACHE_S at most."""
        now = time.monotonic()
        cached = self._cache.get("secrets")
        if cached is None or now - cached[0] > CACHE_S or not cached[1].holds(self.workspace):
            cached = (now, SecretScan.of(self.workspace, self.secrets_visible))
            self._cache["secrets"] = cached
        secrets: tuple[Secret, ...] = cached[1].secrets
        masks: list[tuple[str, str]] = []
        ws = str(self.workspace).rstrip("/") + "/"
        hidden = [h.path.rstrip("/") + "/" for h in self._hidden() if h.is_dir and h.path.startswith(ws)]
        for s in secrets:
            target = str(self.workspace / s.rel)
            if not os.path.isfile(target) or os.path.islink(target) or any(target.startswith(h) for h in hidden):
                continue  # gone since the scan, a link, or in a folder hidden whole: nothing to bind over
            copy = sanitised_copy(self.workspace, s, scratch()) if s.sanitiser else None
            masks.append((str(copy) if copy is not None else "/dev/null", target))
        return secrets, tuple(masks)

    def home_links(self) -> dict[str, str]:
        """Workspace files the home links to (a dotfiles repository: `~/.bashrc -> <workspace>/bashrc`): your
        shell or another tool runs them from the home, outside the sandbox, so a command's change to them is a
        control path, not data. Found from the home's own links (positive knowledge), rescanned every CACHE_S."""
        now = time.monotonic()
        cached = self._cache.get("home_links")
        if cached is None or now - cached[0] > CACHE_S:
            cached = (now, home_links(self.home, self.workspace))
            self._cache["home_links"] = cached
        return dict(cached[1])

    def git_named(self) -> dict[str, str]:
        """Workspace paths git's settings name (`git_settings.py`: a `core.hooksPath` folder, an included config,
        a program given as a path): control paths. Read again whenever a config file it read changed."""
        from framework_core.sandbox.git_settings import read_settings

        cached = self._cache.get("git_named")
        if cached is not None and all(_signature(p) == sig for p, sig in cached[0].items()):
            return dict(cached[1])
        gitdirs = [c.rel.removesuffix("/config") for c in self._controls() if c.rel.endswith("/config")]
        reading = read_settings(self.workspace, gitdirs, self.home, os.environ)
        self._cache["git_named"] = (reading.files, reading.named)
        return dict(reading.named)

    def named_controls(self) -> dict[str, str]:
        """Every workspace path that is control because something outside the workspace names it: the home's
        links into it and git's settings."""
        return {**self.home_links(), **self.git_named()}

    def allowlist(self) -> HomeAllow:
        return self._homes.allowlist()

    def home_description(self) -> list[str]:
        """Lines for `laca doctor`: what a command sees of the home."""
        return self._homes.description()

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

    def _hidden(self) -> list[Hidden]:
        """Paths hidden wherever the view would otherwise show them (`view.build` hides only those): the user's
        `hidden_paths`, LACA's own folders and cache, its installation (unless it is the workspace: LACA
        worked on with LACA), the passwd home when it is not $HOME, and, only when the workspace is the home
        itself (then shown read-only as it is), the credential locations of `hidden.py`."""
        now = time.monotonic()
        cached = self._cache.get("hidden")
        if cached is None or now - cached[0] > CACHE_S:
            same = os.path.realpath(self.workspace) == os.path.realpath(self.home)
            secrets = HOME_SECRETS if same or self._homes.real() is None else ()
            cached = (now, hidden_paths(self.home, self.hidden_extra, self._laca_paths(), secrets))
            self._cache["hidden"] = cached
        return cached[1]

    def _laca_paths(self) -> tuple[Path, ...]:
        """LACA's folders, its cache (the commands' caches are bound from inside it) and install, and the passwd
        home: what no command sees, except the one that is the workspace itself (LACA worked on with LACA)."""
        ws = os.path.realpath(self.workspace)
        cache = self._homes.caches()
        found = [*self.laca_dirs, *([cache.parent, cache] if cache is not None else []), install_root()]
        other = passwd_home()
        if other is not None and other != os.path.realpath(self.home):
            found.append(Path(other))
        return tuple(p for p in found if os.path.realpath(p) != ws)

    def _guarded(self, hidden: list[Hidden], masks: tuple[tuple[str, str], ...], home_replaced: bool
                 ) -> tuple[str, ...]:
        """The host paths `view.check` proves no mount shows: the real home (when it is replaced by the empty
        one), every hidden path (LACA's folders, install, the passwd home) and every masked secret file."""
        home = [self._homes.real() or ""] if home_replaced else []
        return tuple(p for p in (*home, *(h.path for h in hidden), *(t for _, t in masks)) if p)

    def _system(self) -> tuple:
        """The system entries, with `/etc` as a copy of its allowlisted part (`view_inputs.etc_copy`), made again
        when what it was made from changed (checked at most every CACHE_S)."""
        now = time.monotonic()
        cached = self._cache.get("system")
        if cached is not None and now - cached[0] <= CACHE_S:
            return cached[2]
        signature = etc_signature()
        if cached is not None and cached[1] == signature:
            self._cache["system"] = (now, signature, cached[2])
            return cached[2]
        etc = etc_copy(Path(tempfile.mkdtemp(prefix="etc-", dir=self._runtime_dir())))
        self._cache["system"] = (now, signature, system_entries(etc))
        return self._cache["system"][2]

    def _runtime_dir(self) -> Path:
        if self._runtime is None:
            self._runtime = Path(tempfile.mkdtemp(prefix="laca-sandbox-"))
        return self._runtime

    def _overlay_dir(self) -> Path:
        """This session's folder for overlays: on the workspace's file system where it can be, so that changes
        land by rename (see scratch.py); else the runtime folder in $TMPDIR."""
        if "overlays" not in self._cache:
            candidates = default_candidates() if self.overlay_dirs is None else self.overlay_dirs
            self._cache["overlays"] = overlay_home(self.workspace, self.report.bwrap or "bwrap", candidates)
        return self._cache["overlays"] or self._runtime_dir()

    def close(self) -> None:
        self._spare.take()  # the spares lie in the folders dropped below
        self._homes.close()
        overlays = self._cache.pop("overlays", None)
        if overlays is not None:
            drop(overlays)
        if self._runtime is not None:
            drop(self._runtime)
            self._runtime = None


def _hides(hidden: list[Hidden]) -> tuple[Hide, ...]:
    return tuple(Hide(h.path, h.is_dir) for h in hidden)


def _run_dirs() -> tuple[str, ...]:
    """/run, and /var/run where it is a folder of its own rather than a link to /run."""
    extra = ("/var/run",) if os.path.isdir("/var/run") and not os.path.islink("/var/run") else ()
    return ("/run", *extra)


def _signature(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
