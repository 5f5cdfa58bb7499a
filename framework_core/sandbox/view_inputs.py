"""What the view (`view.py`) is built from on this machine: the system entries that exist, the paths no mount may
show, and what a server runs from. The only I/O behind a view: `lstat`, `readlink`, `realpath`, `pyvenv.cfg`."""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

from framework_core.sandbox.view import ETC_ALLOW, ETC_LINKS, ETC_NEVER, SYSTEM_TREES, SystemEntry


def system_entries(etc: Path | None = None) -> tuple[SystemEntry, ...]:
    """The allowlisted system trees that exist (a top-level link, `/bin -> usr/bin`, made as the same link), and
    `/etc`: bound from `etc` (a copy made by `etc_copy`: one mount instead of one per entry), or else each
    allowlisted entry bound from its real path (a `/etc/resolv.conf` link from its target, so the check sees
    what is really shown)."""
    out = []
    for path in SYSTEM_TREES:
        if os.path.islink(path):
            out.append(SystemEntry(path, link=os.readlink(path)))
        elif os.path.exists(path):
            out.append(SystemEntry(path))
    if etc is not None:
        return (*out, SystemEntry("/etc", source=str(etc)))
    for name in ETC_ALLOW:
        path = "/etc/" + name
        if os.path.exists(path):
            real = os.path.realpath(path)
            out.append(SystemEntry(path, source="" if real == path else real))
    return tuple(out)


def etc_signature() -> tuple[tuple[str, int, int, int], ...]:
    """What `etc_copy` was made from (each allowlisted entry's identity and time): a change means a new copy."""
    out: list[tuple[str, int, int, int]] = []
    for name in ETC_ALLOW:
        try:
            st = os.stat("/etc/" + name)
            out.append((name, st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((name, 0, 0, -1))
    return tuple(out)


def etc_copy(into: Path) -> Path:
    """The allowlisted part of `/etc` copied into `into` (made here): files copied, folders copied with their
    links (`ETC_NEVER` left out: `/etc/ssl/private`), a link into the system trees kept as a link (a time zone
    is read by name), any other link copied as what it points to."""
    etc = into / "etc"
    etc.mkdir(parents=True)
    never = {"/etc/" + n for n in ETC_NEVER}
    for name in ETC_ALLOW:
        src, dst = "/etc/" + name, etc / name
        if not os.path.exists(src):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            if os.path.islink(src) and _in_system(os.path.realpath(src)):
                os.symlink(os.readlink(src), dst)
            elif os.path.isdir(src):
                shutil.copytree(src, dst, symlinks=True, ignore=lambda d, names: [
                    n for n in names if os.path.join(d, n) in never], ignore_dangling_symlinks=True)
            else:
                shutil.copy2(src, dst)
        except OSError:
            continue  # unreadable here: a tool then finds it missing, as it would without the allowlist
    for target, dest in ETC_LINKS:
        os.symlink(target, into / dest.lstrip("/"))
    os.chmod(etc, 0o755)
    return etc


def _in_system(path: str) -> bool:
    return any(path == s or path.startswith(s + "/") for s in SYSTEM_TREES)


def passwd_home() -> str | None:
    """The home the user database names for this user (may differ from $HOME: CI images, `sudo -E`)."""
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, OSError):
        return None
    return os.path.realpath(home) if home and home != "/" else None


def install_root() -> Path:
    """LACA's own installation: the checkout when it runs from one (a `pyproject.toml` beside the package), else
    the package folder itself (an installed package: never the whole `site-packages`)."""
    package = Path(__file__).resolve().parents[1]
    return package.parent if (package.parent / "pyproject.toml").is_file() else package


def runs_from(program: tuple[str, ...]) -> tuple[str, ...]:
    """What a server's command line runs from, outside the system trees: the program's folder, or its Python
    environment and that environment's base Python (a venv's `pyvenv.cfg`), and the folder of every argument
    that is an existing file (the script). Shown read-only to that server only."""
    if not program:
        return ()
    out: list[str] = []
    exe = shutil.which(program[0]) if not os.path.isabs(program[0]) else program[0]
    if exe and os.path.isfile(exe):  # a missing program fails as it would outside, naming itself
        real = os.path.realpath(exe)
        out.append(os.path.dirname(real))
        venv = Path(os.path.abspath(exe)).parent.parent
        cfg = venv / "pyvenv.cfg"
        if cfg.is_file():
            out.append(os.path.realpath(venv))
            for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    out.append(os.path.realpath(Path(value.strip()).parent))
    for arg in program[1:]:
        if os.path.isabs(arg) and os.path.isfile(arg):
            out.append(os.path.dirname(os.path.realpath(arg)))
    system = tuple(SYSTEM_TREES)
    return tuple(p for p in dict.fromkeys(out) if p != "/" and not any(p == s or p.startswith(s + "/")
                                                                       for s in system))
