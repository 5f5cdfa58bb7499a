"""What one sandboxed command may do, and the bubblewrap command line that enforces it. Pure: no I/O.

Every command runs in its own user namespace with every capability dropped and no-new-privileges set, so
the sandbox holds when LACA runs as root; in its own PID, UTS, IPC and (unless it was given the network)
network namespaces; in a new terminal session; and dies with LACA. The file system is the host's, read-only,
with a private `/tmp`, credential locations hidden, and the workspace mounted as the plan says:
- `read-only`: Safe commands and the read-only profile: a wrong Safe verdict cannot write anything;
- `overlay`: commands that may write: changes land in an upper directory that LACA applies afterwards
  (with pre-images for undo);
- `write`: the workspace itself, writable, where it cannot be overlaid.
Control paths inside the workspace are bound read-only on top in the writable modes. Mount order matters:
a later mount hides an earlier one below it, so the workspace comes after `/tmp` (it may live there), and
hidden and protected paths come after the workspace (the workspace may be the home directory). A read-only mount
does not stop a process from connecting to a Unix socket, and the network namespace does not cover sockets in
the file system, so `/run` (the Docker socket, the D-Bus buses, podman) is an empty folder inside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

WorkspaceMode = Literal["read-only", "overlay", "write"]

RESOLVER_DIR = "/run/systemd/resolve"  # /etc/resolv.conf often points here: kept so DNS works when allowed
NAMESPACE_FLAGS = ("--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-pid", "--unshare-uts",
                   "--unshare-ipc")
LIFETIME_FLAGS = ("--die-with-parent", "--new-session")


@dataclass(frozen=True)
class Protected:
    path: str  # absolute, inside the workspace
    is_dir: bool
    exists: bool


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


def bwrap_argv(bwrap: str, plan: SandboxPlan) -> list[str]:
    """The full prefix to put before `bash -c CMD` (ends with `--`)."""
    argv = [bwrap, *NAMESPACE_FLAGS]
    if not plan.network:
        argv.append("--unshare-net")
    argv += [*LIFETIME_FLAGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
             "--tmpfs", "/var/tmp", "--tmpfs", "/dev/shm"]
    for run in plan.run_dirs:  # sockets there (docker, D-Bus, podman) would reach the host whatever the mounts
        argv += ["--tmpfs", run]
    argv += ["--ro-bind-try", RESOLVER_DIR, RESOLVER_DIR]
    for path in plan.reexposed:
        argv += ["--ro-bind", path, path]
    argv += _workspace_mount(plan)
    for d in plan.hidden_dirs:
        argv += ["--ro-bind", plan.empty_dir, d]
    for f in plan.hidden_files:
        argv += ["--ro-bind", "/dev/null", f]
    for w in plan.writable:
        argv += ["--bind", w, w]
    if plan.mode != "read-only":
        argv += _protected_mounts(plan)
    argv += ["--chdir", plan.cwd]
    if plan.seccomp_fd is not None:
        argv += ["--seccomp", str(plan.seccomp_fd)]
    argv.append("--")
    return argv


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
