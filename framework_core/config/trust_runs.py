"""The workspace files a trusted item runs, and their digests.

Trusting `python tools/server.py` means trusting `tools/server.py` as it is: an MCP server's or a declared
tool's command and arguments are read for names of files in the workspace (the program itself, a script, a
module given to `-m`, a `--flag=path` value; for a Python file, the modules beside it and the packages' `__init__.py`
above it, which it imports without naming them), and each such file's digest joins the item's own. A later change
to one of them changes the item's digest, so the item is asked about again (see framework_core/config/trust.py).
Pure but for reading those files (never following anything but the path as the item names it; a FIFO or
device is not read).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any, Callable, Iterable

MAX_FILES = 32  # a command line naming more workspace files than this is digested for the first ones only
CHUNK = 1 << 20


def run_files(argv: Iterable[Any], workspace: Path, cwd: str | None = None,
              digest: "Callable[[Path], str | None] | None" = None) -> dict[str, str]:
    """{path relative to the workspace: digest} of each regular file inside the workspace that `argv` names,
    relative to `cwd` (default: the workspace). Words holding a placeholder (`${VAR}`, `{param}`) are left out.
    `digest` takes a file's digest (default: `file_digest`; a WorkspaceFiles' takes each once)."""
    digest = digest or file_digest
    ws = Path(os.path.realpath(workspace))
    base = Path(os.path.realpath(ws / cwd)) if cwd and "${" not in cwd else ws
    words = [w for w in argv if isinstance(w, str) and w and "{" not in w]
    out: dict[str, str] = {}
    for candidate in _candidates(words):
        if len(out) >= MAX_FILES:
            break
        full = Path(os.path.normpath(base / os.path.expanduser(candidate)))
        real = Path(os.path.realpath(full))
        if real != ws and ws not in real.parents:
            continue
        found = digest(real)
        if found is not None:
            out.setdefault(str(real.relative_to(ws)), found)
            if real.suffix == ".py":
                _python_beside(real, ws, out, digest)
    return dict(sorted(out.items()))


def _python_beside(script: Path, ws: Path, out: dict[str, str], digest: "Callable[[Path], str | None]") -> None:
    """What a Python script imports without naming it: the modules in its own folder (sys.path[0] for a
    script) and the `__init__.py` of each package folder above it inside the workspace (run on import), so
    `tools/server.py` is trusted with the `tools/helper.py` it imports. Bounded by MAX_FILES."""
    names: list[Path] = []
    try:
        names = sorted(p for p in script.parent.iterdir() if p.suffix == ".py" and p != script)
    except OSError:
        pass
    folder = script.parent
    while folder != ws and ws in folder.parents:
        folder = folder.parent
        names.append(folder / "__init__.py")
    for path in names:
        if len(out) >= MAX_FILES:
            return
        found = digest(path) if not path.is_symlink() else None
        if found is not None:
            out.setdefault(str(path.relative_to(ws)), found)


def _candidates(words: list[str]) -> list[str]:
    """Every word, the value of `--flag=value`, and the files a `-m package.module` may run."""
    out: list[str] = []
    for i, word in enumerate(words):
        out.append(word)
        if word.startswith("-") and "=" in word:
            out.append(word.split("=", 1)[1])
        if word == "-m" and i + 1 < len(words):
            module = words[i + 1].replace(".", "/")
            out += [f"{module}.py", f"{module}/__main__.py", f"{module}/__init__.py"]
    return out


def digest_of(value: Any) -> str:
    """The digest of a JSON-like value (a trust record's item)."""
    import json

    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:32]


def file_digest(path: Path) -> str | None:
    """The sha256 of a regular file's bytes (first 32 hex digits); None for anything else or unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, CHUNK):
            h.update(chunk)
        return h.hexdigest()[:32]
    except OSError:
        return None
    finally:
        os.close(fd)


def describe_files(files: dict[str, str], verb: str = "runs") -> str:
    """` · runs workspace file(s) a.py (1a2b3c4d), …` for the trust question; '' for none."""
    if not files:
        return ""
    shown = ", ".join(f"{p} ({d[:8]})" for p, d in files.items())
    return f" · {verb} workspace file{'s' if len(files) > 1 else ''} {shown}"


def mcp_argv(value: dict[str, Any]) -> list[Any]:
    return [value.get("command"), *(value.get("args") or [])] if isinstance(value.get("args") or [], list) \
        else [value.get("command")]
