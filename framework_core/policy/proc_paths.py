"""The one normaliser of /proc's aliases: every way /proc names the root, a working directory or an open
file descriptor is read as what it names before a path is judged, for reads and writes alike.

A process's `root` is `/` (`/proc/self/root/etc/shadow` is `/etc/shadow`), its `cwd` the working directory,
for the process itself (`/proc/<pid>/…`, `/proc/self/…`, `/proc/thread-self/…`) and for each of its threads
(`/proc/<pid>/task/<tid>/…`), the pid and tid also as patterns (`/proc/self/task/*/root`). An open
descriptor (`/proc/self/fd/N`, `/dev/fd/N`) is standard input or output for 0, 1 and 2 and otherwise a file
known only at run time, which stays `/proc/self/fd/N` (never a public file). A pattern where the link's own
name is (`/proc/self/r*t`) is read as every link it can match. Pure: text in, text out.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

#: A /proc process directory: a pid, self, thread-self, or a pattern that may match one.
_PROCESS = re.compile(r"\d+|self|thread-self|.*[*?\[].*")
LINKS = ("root", "cwd")
_STANDARD = {"0": "/dev/stdin", "1": "/dev/stdout", "2": "/dev/stderr"}
MAX_READINGS = 8


def _link_at(parts: list[str]) -> tuple[int, str] | None:
    """(how many parts the alias takes, the component naming the link) when `parts` start with one."""
    if len(parts) >= 3 and parts[0] == "proc" and _PROCESS.fullmatch(parts[1]):
        if len(parts) >= 5 and parts[2] == "task" and _PROCESS.fullmatch(parts[3]):
            return 5, parts[4]
        return 3, parts[2]
    return None


def _fd(parts: list[str]) -> str | None:
    """/dev/fd/N, /proc/<p>/fd/N and /proc/<p>/task/<t>/fd/N as the descriptor they open."""
    if len(parts) == 3 and parts[:2] == ["dev", "fd"]:
        n = parts[2]
    elif len(parts) == 4 and parts[0] == "proc" and _PROCESS.fullmatch(parts[1]) and parts[2] == "fd":
        n = parts[3]
    elif len(parts) == 6 and parts[0] == "proc" and parts[2] == "task" and parts[4] == "fd" and \
            _PROCESS.fullmatch(parts[1]) and _PROCESS.fullmatch(parts[3]):
        n = parts[5]
    else:
        return None
    if parts[0] == "proc" and parts[1] not in ("self", "thread-self"):
        return None  # another process's descriptor: judged as that process's (private) file
    return _STANDARD.get(n, f"/proc/self/fd/{n}")


def proc_readings(path: str, cwd: str | None) -> list[tuple[str, bool]]:
    """Every path an absolute `path` can name once /proc's links are followed, each with whether it depends on
    a working directory not known statically. `cwd` is the working directory ("" the workspace, None unknown)."""
    if not path.startswith("/") or ("proc" not in path and "/dev/fd" not in path):
        return [(path, False)]
    out: list[tuple[str, bool]] = []
    _walk([], path.split("/"), cwd, False, out)
    return out[:MAX_READINGS] or [(path, False)]


def _walk(done: list[str], rest: list[str], cwd: str | None, unknown: bool, out: list[tuple[str, bool]]) -> None:
    """Follow the components one by one: `..` climbs from what a link names, as the kernel does. `done` starts
    with REL when the path is relative to the workspace (a link to its working directory)."""
    if len(out) >= MAX_READINGS:
        return
    relative = done[:1] == [REL]
    parts = done[1:] if relative else list(done)
    for k, comp in enumerate(rest):
        if comp in ("", "."):
            continue
        if comp == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif relative:
                parts.append("..")
            continue
        parts.append(comp)
        if relative:
            continue
        if parts == ["dev", "fd"]:  # a link to /proc/self/fd: `..` below it climbs to /proc/self
            parts = ["proc", "self", "fd"]
        link = _link_at(parts)
        if link is not None and len(parts) == link[0]:
            name = link[1]
            pattern = any(c in name for c in "*?[")
            for m in (n for n in LINKS if fnmatchcase(n, name) if pattern or n == name):
                base, more_unknown = _base(m, cwd)
                _walk(base, rest[k + 1:], cwd, unknown or more_unknown, out)
            if name in LINKS:
                return
            continue
        fd = _fd(parts)
        if fd is not None and k == len(rest) - 1:
            out.append((fd, unknown))
            return
    out.append(((("/".join(parts) or ".") if relative else "/" + "/".join(parts)), unknown))


REL = "\0relative"


def _base(link: str, cwd: str | None) -> tuple[list[str], bool]:
    """The components a link starts from: the root, or the working directory (relative ones marked REL)."""
    if link == "root" or cwd is None:
        return [], link != "root"
    if cwd.startswith("/"):
        return [p for p in cwd.split("/") if p], False
    return [REL, *[p for p in cwd.split("/") if p not in ("", ".")]], False
