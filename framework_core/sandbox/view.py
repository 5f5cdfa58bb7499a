"""What one sandboxed process sees of the file system: one ordered list of mounts built from positive inputs
only, and the check that refuses a launch when a protected path would show. Pure: no I/O.

The root starts empty (bubblewrap's own tmpfs, made read-only at the end). On it, in this order of layers:
- the system by allowlist: the program trees (`SYSTEM_TREES`: `/usr`, `/bin`, `/lib*`, `/opt`, ...) and of
  `/etc` only what tools need (`ETC_ALLOW`: name service, resolver, TLS certificates, `ld.so.*`, locale and
  time zone, `os-release`, shells, alternatives); nothing else of `/etc` exists (`/etc/shadow`, `apt/auth.conf`,
  `containers/auth.json`), nor `/home`, `/root`, `/srv`, `/mnt`, `/var` or LACA's own checkout;
- private, empty `/tmp`, `/var/tmp`, `/dev/shm` and runtime folders (`/run`: sockets there reach the host);
- the home: an empty folder with only what `home_allow.yaml` lists on it (`home.py`);
- the workspace (read-only, an overlay, or writable);
- more folders: a server's roots, and what a server runs from (its program's Python environment);
- hidden paths that would otherwise show (the user's `sandbox.hidden_paths`, LACA's folders, credential
  locations when the workspace is the home), control paths read-only, secret files shown empty or sanitised.

The order that makes this safe is not written by hand: `build` sorts the mounts by the depth of where they go,
then by layer, so a folder is always mounted before anything inside it (a workspace inside the home, a home
inside the workspace, a home under `/tmp` all come out right), and at one place the later layer wins (a mask
over a control path). `check` then computes, for every protected path, which mount finally shows it, and
`ViewRefused` names each one that would be visible: the launch is refused, never made.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterable, Literal

from framework_core.errors import LacaError

MountOp = Literal["ro-bind", "ro-bind-try", "bind", "tmpfs", "dev", "proc", "symlink", "overlay"]

SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix", "/snap", "/sys")
#: Of /etc, the files and folders tools read. Everything else in /etc does not exist inside.
ETC_ALLOW = (
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "hostname", "resolv.conf", "gai.conf", "protocols",
    "services", "networks", "rpc", "ethertypes", "ssl", "ca-certificates", "ca-certificates.conf", "pki",
    "crypto-policies", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "locale.alias", "locale.conf", "locale.gen",
    "default/locale", "localtime", "timezone", "os-release", "lsb-release", "debian_version", "alpine-release",
    "redhat-release", "shells", "alternatives", "mime.types", "magic", "mailcap", "inputrc", "bash.bashrc",
    "profile", "terminfo", "manpath.config", "perl", "vim", "java-17-openjdk", "java-21-openjdk", "fonts",
)
ETC_LINKS = (("../proc/self/mounts", "/etc/mtab"),)
ETC_NEVER = ("ssl/private",)  # inside an allowed folder, never shown (a server's private keys)
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")
RESOLVER_DIR = "/run/systemd/resolve"  # /etc/resolv.conf often points here: kept so DNS works when allowed

# layers, in the order they win at one place
SYSTEM, PRIVATE_LAYER, HOME, WORKSPACE, MORE, HIDE, CONTROL, MASK = range(8)
LAYER_NAMES = ("system", "private", "home", "workspace", "more", "hidden", "control path", "mask")


@dataclass(frozen=True)
class Mount:
    op: MountOp
    dest: str
    source: str = ""  # binds and overlays: the host path shown at `dest`; symlink: the link's target
    layer: int = SYSTEM
    upper: str = ""  # overlay only
    work: str = ""
    read_only: bool = False  # a tmpfs made read-only once everything inside it is mounted (a hidden folder)

    def shows(self, location: str) -> str | None:
        """The host path this mount shows at `location` (at or under `dest`); None for what it makes up."""
        if self.op in ("tmpfs", "dev", "proc", "symlink") or not self.source:
            return None
        return _join(self.source, _rel(location, self.dest))


@dataclass(frozen=True)
class SystemEntry:
    path: str  # absolute
    link: str = ""  # the target when the path is a symbolic link (made as a link inside, not bound)
    source: str = ""  # the real path bound there ("": `path` itself)


@dataclass(frozen=True)
class Hide:
    path: str
    is_dir: bool


@dataclass(frozen=True)
class ViewInputs:
    """Everything a view is made of; each field is something LACA knows positively."""

    workspace: str
    mode: Literal["read-only", "overlay", "write"] = "read-only"
    upper: str = ""
    work: str = ""
    system: tuple[SystemEntry, ...] = ()  # (): every SYSTEM_TREES and ETC_ALLOW entry, bound where it exists
    run_dirs: tuple[str, ...] = ("/run",)
    home: str = ""  # the home replaced by an empty folder ("": none)
    home_source: str = ""  # bound as that home ("": a tmpfs)
    home_mounts: tuple[tuple[str, str, bool], ...] = ()  # (source, dest, writable), on the empty home
    writable: tuple[str, ...] = ()  # bound writable (a server's roots with write access)
    read_only: tuple[str, ...] = ()  # bound read-only (what a server runs from)
    hidden: tuple[Hide, ...] = ()  # hidden where they would otherwise show
    protected: tuple[str, ...] = ()  # control paths, bound read-only onto themselves (existing ones only)
    masks: tuple[tuple[str, str], ...] = ()  # (source, target): a secret file shown empty or sanitised
    premounted: bool = False  # overlay mode: the overlay is already mounted over the workspace (`volatile`)


class ViewRefused(LacaError):
    """A plan that would show a protected path: the launch is refused with each path named."""

    def __init__(self, exposures: list[tuple[str, str, Mount]]):
        self.exposures = exposures
        shown = "; ".join(f"{path} (at {where}, through the {LAYER_NAMES[m.layer]} mount of {m.source})"
                          for path, where, m in exposures)
        super().__init__(f"the sandbox refused to start: the command would see {shown}. Nothing was run; "
                         "check sandbox.home_allow, sandbox.home_caches and the MCP server's roots: settings")


def build(inputs: ViewInputs) -> tuple[Mount, ...]:
    """The complete mount list, in the order bubblewrap must apply it."""
    base = [*_system(inputs.system), *_private(inputs.run_dirs), *_home(inputs), _workspace(inputs),
            *(Mount("bind", w, w, MORE) for w in inputs.writable),
            *(Mount("ro-bind", r, r, MORE) for r in inputs.read_only)]
    if inputs.mode != "read-only":
        base += [Mount("ro-bind", p, p, CONTROL) for p in inputs.protected]
    base += [Mount("ro-bind", target, source, MASK) for source, target in inputs.masks]
    ordered = _ordered(base)
    hides = [_hide(h) for h in inputs.hidden if visible(ordered, h.path)]
    return _ordered(base + hides)


def check(mounts: Iterable[Mount], protected: Iterable[str]) -> None:
    """Raise ViewRefused naming every protected path some mount would finally show."""
    mounts = tuple(mounts)
    found = [(p, where, m) for p in dict.fromkeys(_norm(p) for p in protected if p) for where, m in
             visible(mounts, p)]
    if found:
        raise ViewRefused(found)


def visible(mounts: tuple[Mount, ...] | list[Mount], path: str) -> list[tuple[str, Mount]]:
    """Where `path` (a host path) can be seen inside, and through which mount: each mount showing `path` or a
    folder holding it, at the place it puts `path`, where that mount is the one finally on top there."""
    path = _norm(path)
    out = []
    for m in mounts:
        if m.shows(m.dest) is None or not _within(path, m.source):
            continue
        where = _join(m.dest, _rel(path, m.source))
        top = final(mounts, where)
        if top is not None and top.shows(where) == path:
            out.append((where, top))
    return list({w: (w, m) for w, m in out}.values())


def final(mounts: tuple[Mount, ...] | list[Mount], location: str) -> Mount | None:
    """The last mount at or above `location`: the one whose content is seen there."""
    top = None
    for m in mounts:
        if _within(location, m.dest):
            top = m
    return top


def bwrap_mount_args(mounts: Iterable[Mount]) -> list[str]:
    """The mounts as bubblewrap options; the hidden folders' tmpfs and the root made read-only last."""
    argv: list[str] = []
    late: list[str] = []
    for m in mounts:
        if m.op in ("dev", "proc"):
            argv += [f"--{m.op}", m.dest]
        elif m.op == "tmpfs":
            argv += ["--tmpfs", m.dest]
            if m.read_only:
                late += ["--remount-ro", m.dest]
        elif m.op == "symlink":
            argv += ["--symlink", m.source, m.dest]
        elif m.op == "overlay":
            argv += ["--overlay-src", m.source, "--overlay", m.upper, m.work, m.dest]
        else:
            argv += [f"--{m.op}", m.source, m.dest]
    return argv + late + ["--remount-ro", "/"]


def _system(entries: tuple[SystemEntry, ...]) -> list[Mount]:
    if not entries:
        entries = tuple(SystemEntry(p) for p in SYSTEM_TREES + tuple("/etc/" + e for e in ETC_ALLOW))
    out = [Mount("symlink", e.path, e.link) if e.link else Mount("ro-bind-try", e.path, e.source or e.path)
           for e in entries]
    if not any(e.path == "/etc" for e in entries):  # entry by entry: the links and what is never shown added here
        out += [Mount("symlink", dest, target) for target, dest in ETC_LINKS]
        out += [Mount("tmpfs", "/etc/" + n, read_only=True) for n in ETC_NEVER]
    return out + [Mount("dev", "/dev"), Mount("proc", "/proc")]


def _private(run_dirs: tuple[str, ...]) -> list[Mount]:
    out = [Mount("tmpfs", p, layer=PRIVATE_LAYER) for p in (*PRIVATE, *run_dirs)]
    return out + [Mount("ro-bind-try", RESOLVER_DIR, RESOLVER_DIR, PRIVATE_LAYER)]


def _home(inputs: ViewInputs) -> list[Mount]:
    if not inputs.home:
        return []
    base = Mount("bind", inputs.home, inputs.home_source, HOME) if inputs.home_source else \
        Mount("tmpfs", inputs.home, layer=HOME)
    return [base] + [Mount("bind" if rw else "ro-bind", dest, source, HOME) for source, dest, rw in inputs.home_mounts]


def _workspace(inputs: ViewInputs) -> Mount:
    ws = inputs.workspace
    if inputs.mode == "overlay" and inputs.premounted:
        return Mount("bind", ws, ws, WORKSPACE)  # the overlay mounted there before bubblewrap starts
    if inputs.mode == "overlay":
        assert inputs.upper and inputs.work, "overlay mode needs upper and work directories"
        return Mount("overlay", ws, ws, WORKSPACE, inputs.upper, inputs.work)
    return Mount("bind" if inputs.mode == "write" else "ro-bind", ws, ws, WORKSPACE)


def _hide(hide: Hide) -> Mount:
    """A folder becomes an empty read-only tmpfs (mounts inside it still go on top); a file, /dev/null."""
    if hide.is_dir:
        return Mount("tmpfs", hide.path, layer=HIDE, read_only=True)
    return Mount("ro-bind", hide.path, "/dev/null", HIDE)


def _ordered(mounts: list[Mount]) -> tuple[Mount, ...]:
    """Shallower places first, then by layer: nothing is mounted before a folder that holds it."""
    return tuple(sorted(mounts, key=lambda m: (_depth(m.dest), m.layer)))


def _depth(path: str) -> int:
    return 0 if path == "/" else _norm(path).count("/")


def _norm(path: str) -> str:
    return posixpath.normpath(path) if path.startswith("/") else path


def _within(path: str, folder: str) -> bool:
    folder = _norm(folder)
    return path == folder or folder == "/" or path.startswith(folder + "/")


def _rel(path: str, folder: str) -> str:
    folder = _norm(folder)
    return "" if path == folder else path[len(folder.rstrip("/")) + 1:]


def _join(folder: str, rel: str) -> str:
    return folder if not rel else folder.rstrip("/") + "/" + rel
