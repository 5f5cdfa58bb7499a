"""What one sandboxed command may do, and the bubblewrap command line that enforces it. Pure: no I/O.

Every command runs in its own user namespace with every capability dropped and no-new-privileges set, so
the sandbox holds when LACA runs as root; in its own PID, UTS, IPC and (unless it was given the network)
network namespaces; in a new terminal session; and dies with LACA (see "Lifetime" below). What it sees of
the file system is one list of mounts built and checked by `view.py` from positive inputs (the system by
allowlist, the home by `home_allow.yaml`, the workspace, LACA's caches; nothing else exists), with the
workspace mounted as the plan says:
- `read-only`: Safe commands and the read-only profile: a wrong Safe verdict cannot write anything;
- `overlay`: commands that may write: changes land in an upper directory that LACA applies afterwards
  (with pre-images for undo);
- `write`: the workspace itself, writable, where it cannot be overlaid.
Control paths inside the workspace are bound read-only on top in the writable modes. A read-only mount does not
stop a process from connecting to a Unix socket, and the network namespace does not cover sockets in the file
system, so `/run` (the Docker socket, the D-Bus buses, podman) is an empty folder inside. `bwrap_argv` refuses
(`view.ViewRefused`) a plan whose mounts would show any of its `guarded` paths.

Lifetime. `--die-with-parent` ties only processes that are set up while their parent lives: bubblewrap's
sandbox child sets its parent-death signal once its setup is done (the clone does not inherit it), so if LACA
and the outer bwrap die while that child is still mounting, the child goes on to run the command. LACA's reaper
(`tools/reaper.py`) closes that gap by killing the outer bwrap's whole process group, which holds the
sandbox's init (killing a PID namespace's init ends every process in it) unless `--new-session` moved the
child into a session of its own first. So a command started by the runner, already in a new session with no
controlling terminal, is planned with `new_session=False`: the flag adds nothing there and would open the gap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from framework_core.sandbox.view import Hide, SystemEntry, ViewInputs, bwrap_mount_args, build, check

WorkspaceMode = Literal["read-only", "overlay", "write"]

NAMESPACE_FLAGS = ("--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-pid", "--unshare-uts",
                   "--unshare-ipc")
LIFETIME_FLAGS = ("--die-with-parent",)


@dataclass(frozen=True)
class Protected:
    path: str  # absolute, inside the workspace
    is_dir: bool
    exists: bool


@dataclass(frozen=True)
class HomeBind:
    source: str
    dest: str  # absolute, under the home
    writable: bool = False


@dataclass(frozen=True)
class Volatile:
    """How to mount the overlay with `volatile` (no sync per copied-up file: the change set is read and landed
    by LACA anyway): `unshare` and `mount` programs, and the ids the command keeps inside (`probe.py` checks
    this works here)."""

    unshare: str
    mount: str
    uid: int
    gid: int


#: Run by `sh` in a user and mount namespace of its own: the overlay over the workspace, then bubblewrap.
VOLATILE_SCRIPT = ('"$4" -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,userxattr,volatile" "$1" '
                   '&& shift 4 && exec "$@"')


@dataclass(frozen=True)
class SandboxPlan:
    workspace: str
    cwd: str
    mode: WorkspaceMode
    network: bool = False
    hidden: tuple[Hide, ...] = ()  # hidden where the view would otherwise show them
    protected: tuple[Protected, ...] = ()
    upper: str | None = None  # overlay mode: where changes land
    work: str | None = None  # overlay mode: overlayfs work dir, same file system as `upper`
    seccomp_fd: int | None = None
    run_dirs: tuple[str, ...] = ("/run",)  # runtime folders replaced by empty ones (their sockets reach the host)
    writable: tuple[str, ...] = ()  # more folders bound writable (an MCP server's roots)
    read_only: tuple[str, ...] = ()  # more folders bound read-only (what a server runs from)
    system: tuple[SystemEntry, ...] = ()  # the system trees as found (`view.SYSTEM_TREES`); (): bound where they exist
    home: str = ""  # the real home, replaced by an empty folder ("" : none)
    home_source: str = ""  # a scratch folder bound as the home ("": a tmpfs)
    home_mounts: tuple[HomeBind, ...] = ()  # on top of the empty home
    unset_env: tuple[str, ...] = ()  # variables removed unless the command has the network (proxies)
    masks: tuple[tuple[str, str], ...] = ()  # (source, target): a workspace secret shown as empty or sanitised
    offline_env: tuple[tuple[str, str], ...] = ()  # set unless the command has the network (environment.OFFLINE)
    new_session: bool = True  # False when the caller starts bwrap in a new session itself (see "Lifetime")
    guarded: tuple[str, ...] = ()  # host paths no mount may show (the homes, LACA's folders and install, secrets)
    volatile: Volatile | None = None  # overlay mode: mounted `volatile` outside bubblewrap (see `volatile_prefix`)

    def view(self) -> ViewInputs:
        return ViewInputs(
            self.workspace, self.mode, self.upper or "", self.work or "", self.system, self.run_dirs, self.home,
            self.home_source, tuple((b.source, b.dest, b.writable) for b in self.home_mounts), self.writable,
            self.read_only, self.hidden, tuple(p.path for p in self.protected if p.exists), self.masks,
            premounted=self.mode == "overlay" and self.volatile is not None)


def bwrap_argv(bwrap: str, plan: SandboxPlan) -> list[str]:
    """The full prefix to put before `bash -c CMD` (ends with `--`). Raises `view.ViewRefused` when the plan's
    mounts would show one of its `guarded` paths."""
    mounts = build(plan.view())
    check(mounts, plan.guarded)
    argv = [*volatile_prefix(plan), bwrap, *NAMESPACE_FLAGS]
    if plan.volatile is not None and plan.mode == "overlay":
        argv += ["--uid", str(plan.volatile.uid), "--gid", str(plan.volatile.gid)]
    if not plan.network:
        argv.append("--unshare-net")
        for name in plan.unset_env:
            argv += ["--unsetenv", name]
        for name, value in plan.offline_env:
            argv += ["--setenv", name, value]
    argv += [*LIFETIME_FLAGS, *(["--new-session"] if plan.new_session else []), *bwrap_mount_args(mounts),
             "--chdir", plan.cwd]
    if plan.seccomp_fd is not None:
        argv += ["--seccomp", str(plan.seccomp_fd)]
    argv.append("--")
    return argv


def volatile_prefix(plan: SandboxPlan) -> list[str]:
    """Overlay mode with `volatile`: bubblewrap's `--overlay` takes no mount options, so the overlay is mounted
    over the workspace by `mount` in a user and mount namespace of its own (`unshare` execs `sh`, which execs
    bubblewrap: one process, as the reaper expects), and bubblewrap binds the mounted workspace like any other."""
    v = plan.volatile
    if v is None or plan.mode != "overlay":
        return []
    assert plan.upper and plan.work, "overlay mode needs upper and work directories"
    return [v.unshare, "--user", "--map-root-user", "--mount", "--", "sh", "-c", VOLATILE_SCRIPT, "sh",
            plan.workspace, plan.upper, plan.work, v.mount]
