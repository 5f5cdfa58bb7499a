"""What one sandboxed command may do, and the bubblewrap command line that enforces it. Pure: no I/O.

Every command runs in its own user namespace with every capability dropped and no-new-privileges set, so
the sandbox holds when LACA runs as root; in its own PID, UTS, IPC and (unless it was given the network)
network namespaces; in a new terminal session; and dies with LACA (see "Lifetime" below). The file system is
the host's, read-only, with a private `/tmp`, an empty home showing only what `home_allow.yaml` lists
(toolchains read-only, tool configuration as copies without credentials, LACA's own caches writable; see
`home.py`), and the workspace mounted as the plan says:
- `read-only`: Safe commands and the read-only profile: a wrong Safe verdict cannot write anything;
- `overlay`: commands that may write: changes land in an upper directory that LACA applies afterwards
  (with pre-images for undo);
- `write`: the workspace itself, writable, where it cannot be overlaid.
Control paths inside the workspace are bound read-only on top in the writable modes. Mount order matters:
a later mount hides an earlier one below it, so the home comes after `/tmp` (a home under /tmp is shown the same
way), the workspace after the home (it may live there; a workspace that contains the home gets the home after
it instead), and hidden and protected paths after the workspace. A read-only mount
does not stop a process from connecting to a Unix socket, and the network namespace does not cover sockets in
the file system, so `/run` (the Docker socket, the D-Bus buses, podman) is an empty folder inside.

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

WorkspaceMode = Literal["read-only", "overlay", "write"]

RESOLVER_DIR = "/run/systemd/resolve"  # /etc/resolv.conf often points here: kept so DNS works when allowed
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
class SandboxPlan:
    workspace: str
    cwd: str
    mode: WorkspaceMode
    network: bool = False
    hidden_dirs: tuple[str, ...] = ()
    hidden_files: tuple[str, ...] = ()
    protected: tuple[Protected, ...] = ()
    empty_dir: str = ""  # an empty folder bound read-only over hidden folders
    upper: str | None = None  # overlay mode: where changes land
    work: str | None = None  # overlay mode: overlayfs work dir, same file system as `upper`
    seccomp_fd: int | None = None
    run_dirs: tuple[str, ...] = ("/run",)  # runtime folders replaced by empty ones (their sockets reach the host)
    writable: tuple[str, ...] = ()  # more folders bound writable (an MCP server's package caches)
    reexposed: tuple[str, ...] = ()  # LACA's own install and Python when they live under a private folder (/tmp)
    home: str = ""  # the real home, replaced by an empty folder ("" : left as the host has it)
    home_source: str = ""  # a scratch folder bound as the home ("": a tmpfs)
    home_mounts: tuple[HomeBind, ...] = ()  # on top of the empty home, in order
    home_after_workspace: bool = False  # the workspace contains the home: the home's mounts go after it
    unset_env: tuple[str, ...] = ()  # variables removed unless the command has the network (proxies)
    masks: tuple[tuple[str, str], ...] = ()  # (source, target): a workspace secret shown as empty or sanitised
    offline_env: tuple[tuple[str, str], ...] = ()  # set unless the command has the network (environment.OFFLINE)
    new_session: bool = True  # False when the caller starts bwrap in a new session itself (see "Lifetime")


def bwrap_argv(bwrap: str, plan: SandboxPlan) -> list[str]:
    """The full prefix to put before `bash -c CMD` (ends with `--`)."""
    argv = [bwrap, *NAMESPACE_FLAGS]
    if not plan.network:
        argv.append("--unshare-net")
        for name in plan.unset_env:
            argv += ["--unsetenv", name]
        for name, value in plan.offline_env:
            argv += ["--setenv", name, value]
    argv += [*LIFETIME_FLAGS, *(["--new-session"] if plan.new_session else []),
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm"]
    for run in plan.run_dirs:  # sockets there (docker, D-Bus, podman) would reach the host whatever the mounts
        argv += ["--tmpfs", run]
    argv += ["--ro-bind-try", RESOLVER_DIR, RESOLVER_DIR]
    if not plan.home_after_workspace:
        argv += _home_mounts(plan)
    for path in plan.reexposed:
        argv += ["--ro-bind", path, path]
    argv += _workspace_mount(plan)
    if plan.home_after_workspace:
        argv += _home_mounts(plan)
    for d in plan.hidden_dirs:
        argv += ["--ro-bind", plan.empty_dir, d]
    for f in plan.hidden_files:
        argv += ["--ro-bind", "/dev/null", f]
    for w in plan.writable:
        argv += ["--bind", w, w]
    if plan.mode != "read-only":
        argv += _protected_mounts(plan)
    for source, target in plan.masks:  # last: a protected folder bound again must not show a secret in it
        argv += ["--ro-bind", source, target]
    argv += ["--chdir", plan.cwd]
    if plan.seccomp_fd is not None:
        argv += ["--seccomp", str(plan.seccomp_fd)]
    argv.append("--")
    return argv


def _home_mounts(plan: SandboxPlan) -> list[str]:
    if not plan.home:
        return []
    out = ["--bind", plan.home_source, plan.home] if plan.home_source else ["--tmpfs", plan.home]
    for b in plan.home_mounts:
        out += ["--bind" if b.writable else "--ro-bind", b.source, b.dest]
    return out


def _workspace_mount(plan: SandboxPlan) -> list[str]:
    ws = plan.workspace
    if plan.mode == "read-only":
        return ["--ro-bind", ws, ws]
    if plan.mode == "overlay":
        assert plan.upper and plan.work, "overlay mode needs upper and work directories"
        return ["--overlay-src", ws, "--overlay", plan.upper, plan.work, ws]
    return ["--bind", ws, ws]


def _protected_mounts(plan: SandboxPlan) -> list[str]:
    """Existing control paths are bound onto themselves read-only. A missing one is not mounted (a mount point
    would show the command an empty placeholder that `git add -A` could commit): what a command creates there
    is dropped afterwards (never applied from the overlay; removed in write mode)."""
    out: list[str] = []
    for p in plan.protected:
        if p.exists:
            out += ["--ro-bind", p.path, p.path]
    return out
