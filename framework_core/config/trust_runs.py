"""The code a trusted item runs, and its digests: trust binds a code root, not the words of a command line.

Trusting `python tools/server.py` means trusting the code that command runs as it is now. The command line is
read for the workspace files it names, seen through what starts them: `bash -c "exec python tools/server.py"`
and `exec`/`env` wrappers are read as the command they run, `-m pkg.mod` as the package it imports, and
`npx`/`pnpm dlx`/`yarn dlx` as the workspace's own `node_modules` package they would resolve to. Each such file
brings its **code root**: the whole folder tree it lives in (a script in `tools/` brings all of `tools/`: its
sub-packages, the plugins its data files name, the shell files it sources), or, for a program at the
workspace's top, the program and what it names (a shell script's words, a Python file's imports, a JS file's
`require`s of `node_modules` packages), followed the same way. Every file of every root is digested; there is
no file-count cap, only a size bound (MAX_ROOT_FILES, MAX_ROOT_BYTES), past which the item cannot be trusted and
says so (TOO_LARGE). A later change to any file changes the item's digest, and the question names the files.
Pure but for reading those files (never following a symlink out of the workspace; a FIFO or device is not read).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
from pathlib import Path
from typing import Any, Callable, Iterable

CHUNK = 1 << 20
MAX_ROOT_FILES = 20_000  # one code root: more files than this cannot be trusted as one
MAX_ROOT_BYTES = 64 << 20
MAX_FOLLOW = 200  # files a top-level program's names lead to, followed breadth first
TOO_LARGE = "too-large"  # the digest of a root over the bound: never trusted (see `refused`)
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
SKIP_IN_ROOT = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_PY_IMPORT = re.compile(
    r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import|import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))", re.M)
_JS_REQUIRE = re.compile(r"""(?:require\(\s*|from\s+|import\s*\(\s*|import\s+)['"]([^'"./][^'"]*)['"]""")

Digest = Callable[[Path], "str | None"]


def run_files(argv: Iterable[Any], workspace: Path, cwd: str | None = None,
              digest: "Digest | None" = None) -> dict[str, str]:
    """{path relative to the workspace: digest} of every file of the code roots `argv` (run in `cwd`, default
    the workspace) brings; a root over the size bound is one entry `<root>/` with the digest TOO_LARGE. Words
    holding a placeholder (`${VAR}`, `{param}`) are left out. `digest` takes a file's digest (default
    `file_digest`; a WorkspaceFiles' takes each once)."""
    digest = digest or file_digest
    ws = Path(os.path.realpath(workspace))
    base = Path(os.path.realpath(ws / cwd)) if cwd and "${" not in cwd else ws
    words = unwrap([w for w in argv if isinstance(w, str) and w and "{" not in w])
    out: dict[str, str] = {}
    todo: list[Path] = []
    for candidate in _candidates(words, base, ws):
        full = Path(os.path.normpath(base / os.path.expanduser(candidate)))
        real = Path(os.path.realpath(full))
        if (real == ws or ws in real.parents) and (real.is_file() or real.is_dir()):
            todo.append(real)
    _follow(todo, ws, out, digest)
    return dict(sorted(out.items()))


def refused(files: dict[str, str]) -> list[str]:
    """The code roots too large to trust (from `run_files`)."""
    return [p for p, d in files.items() if d == TOO_LARGE]


def unwrap(words: list[str]) -> list[str]:
    """The command a wrapper runs: `bash -c "exec python s.py"`, `exec …`, `env A=1 …` read as what they start
    (the words of every level kept, so nothing a wrapper names is lost)."""
    out = list(words)
    rest = words
    for _ in range(4):
        while rest and (rest[0] in ("exec", "env", "nohup", "command") or re.match(r"^[A-Za-z_]\w*=", rest[0])):
            rest = rest[1:]
        if len(rest) >= 3 and os.path.basename(rest[0]) in SHELLS and "-c" in rest[1:-1]:
            script = rest[rest.index("-c") + 1]
            try:
                rest = shlex.split(script, comments=True)
            except ValueError:
                rest = script.split()
            out += rest
            continue
        break
    return out


def _candidates(words: list[str], base: Path, ws: Path) -> list[str]:
    """Every word, the value of `--flag=value`, the files a `-m package.module` may run, and the package a
    `npx`-like runner resolves to in the workspace's own node_modules."""
    out: list[str] = []
    for i, word in enumerate(words):
        out.append(word)
        if word.startswith("-") and "=" in word:
            out.append(word.split("=", 1)[1])
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word == "-m" and nxt:
            top = nxt.split(".", 1)[0]
            module = nxt.replace(".", "/")
            out += [f"{module}.py", f"{module}/__main__.py", top if "." in nxt else f"{module}"]
        runner = os.path.basename(word)
        if runner in ("npx", "bunx") or (runner in ("pnpm", "yarn", "bun") and nxt in ("dlx", "exec", "x")):
            out += _node_bins(words[i + 1:], base, ws)
    return out


def _node_bins(rest: list[str], base: Path, ws: Path) -> list[str]:
    """`npx [-y] [-p PKG] NAME`: the `node_modules/.bin/NAME` npm finds first, in `base` or a folder above it
    inside the workspace, and the package it links into (npx runs the workspace's copy before fetching one)."""
    names: list[str] = []
    skip = False
    for w in rest:
        if skip:
            names.append(w)
            skip = False
        elif w in ("-p", "--package"):
            skip = True
        elif w.startswith("--package="):
            names.append(w.split("=", 1)[1])
        elif w in ("dlx", "exec", "x") or w.startswith("-"):
            continue
        else:
            names.append(w)
            break
    out: list[str] = []
    folder = base
    while True:
        for name in names:
            bare = name.rsplit("@", 1)[0] if name.rfind("@") > 0 else name
            out += [str(folder / "node_modules" / ".bin" / os.path.basename(bare)), str(folder / "node_modules" / bare)]
        if folder == ws or ws not in folder.parents:
            return out
        folder = folder.parent


def _follow(todo: list[Path], ws: Path, out: dict[str, str], digest: Digest) -> None:
    """Each named file's code root digested into `out`; a top-level program's names followed, bounded."""
    seen: set[Path] = set()
    steps = 0
    while todo and steps < MAX_FOLLOW:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        steps += 1
        root = _root_of(path, ws)
        if root is not None:
            _digest_tree(root, ws, out, digest)
            if path.suffix == ".py":  # the package folders above it run their __init__.py on import
                for init in (f / "__init__.py" for f in root.parents if ws in f.parents):
                    found = digest(init) if not init.is_symlink() else None
                    if found is not None:
                        out.setdefault(str(init.relative_to(ws)), found)
            continue
        found = digest(path) if not path.is_symlink() else None
        if found is None:
            continue
        out.setdefault(str(path.relative_to(ws)), found)
        todo += [p for p in _named_by(path, ws) if p not in seen]


def _root_of(path: Path, ws: Path) -> Path | None:
    """The tree a file's code lives in: its folder (a node_modules package: the package's folder), or None at
    the workspace's top, where the program brings only itself and what it names. A folder is its own root."""
    rel = path.relative_to(ws).parts
    if "node_modules" in rel:
        i = len(rel) - 1 - rel[::-1].index("node_modules")
        pkg = rel[i + 1:i + 3] if len(rel) > i + 2 and rel[i + 1].startswith("@") else rel[i + 1:i + 2]
        if pkg and pkg[0] != ".bin":
            return ws.joinpath(*rel[:i + 1], *pkg)
        return None  # a .bin link: followed through its realpath by the caller
    if path.is_dir():
        return path
    return path.parent if len(rel) > 1 else None


def _digest_tree(root: Path, ws: Path, out: dict[str, str], digest: Digest) -> None:
    """Every regular file below `root` (no symlink followed), or one TOO_LARGE entry past the bound."""
    rel_root = str(root.relative_to(ws))
    if rel_root + "/" in out:
        return  # over the bound already
    found: dict[str, str] = {}
    files = size = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        nested_modules = "node_modules" not in root.parts
        for entry in entries:
            if entry.name in SKIP_IN_ROOT or (entry.name == "node_modules" and nested_modules):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode):
                files, size = files + 1, size + st.st_size
                if files > MAX_ROOT_FILES or size > MAX_ROOT_BYTES:
                    out[rel_root + "/"] = TOO_LARGE
                    return
                d = digest(Path(entry.path))
                if d is not None:
                    found[str(Path(entry.path).relative_to(ws))] = d
    out.update(found)


def _named_by(path: Path, ws: Path) -> list[Path]:
    """The workspace files a top-level program names in its text: a shell script's words, a Python file's imports
    (modules and packages beside it), a JS file's `require`s of node_modules packages."""
    try:
        with open(path, "rb") as f:
            text = f.read(CHUNK).decode("utf-8", "replace")
    except OSError:
        return []
    names: list[str] = []
    if path.suffix == ".py":
        for m in _PY_IMPORT.finditer(text):
            for mod in (m.group(1) or m.group(2) or "").split(","):
                top = mod.strip().split(".", 1)[0]
                names += [f"{top}.py", top]
    elif path.suffix in (".js", ".mjs", ".cjs", ".ts"):
        names += [f"node_modules/{m.group(1) if m.group(1).startswith('@') else m.group(1).split('/')[0]}"
                  for m in _JS_REQUIRE.finditer(text)]
    else:  # a shell script, or anything run as one: its words that name files
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            words = text.split()
        names += [w.split("=", 1)[-1] for w in words if "/" in w or w.endswith((".sh", ".py", ".js"))]
    out: list[Path] = []
    for name in names:
        real = Path(os.path.realpath(path.parent / os.path.expanduser(name)))
        if (real != ws and ws in real.parents) and real.exists():
            out.append(real)
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
    """` · runs code root tools/ (12 files, 1a2b3c4d) and workspace file run.sh (…)` for the trust question:
    one item per root folder, with a digest of all of it; '' for none."""
    if not files:
        return ""
    folders = sorted({os.path.dirname(p) for p, d in files.items() if d != TOO_LARGE} - {""}, key=len)
    groups: dict[str, dict[str, str]] = {}
    for p, d in files.items():
        here = os.path.dirname(p)
        top = p if d == TOO_LARGE else next((f for f in folders if here == f or here.startswith(f + "/")), "")
        groups.setdefault(top if top else p, {})[p] = d
    parts: list[str] = []
    for folder, members in groups.items():
        if any(d == TOO_LARGE for d in members.values()):
            parts.append(f"code root {folder} (TOO LARGE to trust: over {MAX_ROOT_FILES:,} files or "
                         f"{MAX_ROOT_BYTES >> 20} MB; move the program to a folder of its own)")
        elif folder in members:  # a file at the workspace's top
            parts.append(f"workspace file {folder} ({members[folder][:8]})")
        else:
            parts.append(f"code root {folder}/ ({len(members)} file{'s' if len(members) > 1 else ''}, "
                         f"{digest_of(members)[:8]})")
    return f" · {verb} " + ", ".join(parts)


def mcp_argv(value: dict[str, Any]) -> list[Any]:
    return [value.get("command"), *(value.get("args") or [])] if isinstance(value.get("args") or [], list) \
        else [value.get("command")]
