"""Everyday workflows run twice: by a scripted model through one `laca -p` run, and directly with `bash -c` in a
copy of the same workspace; then the two end states are compared (docs/ARCHITECTURE.md, "Two layers of safety":
what an approved command does should land as if it ran directly).

Used by `tests/integration/test_workflows_auto.py` (the offline twelve, pass/fail) and
`benchmarks/bench_workflows.py` (a table). The workspace is built here, outside LACA, identically for both runs;
each workflow lives in its own folder, so one that fails does not disturb the others.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The user's Rust toolchains (rustup's proxies find them through $HOME, which the runs replace).
RUSTUP_HOME = os.environ.get("RUSTUP_HOME") or os.path.expanduser("~/.rustup")
GITCONFIG = "[user]\n\tname = Work Flow\n\temail = workflow@example.invalid\n[init]\n\tdefaultBranch = main\n"


@dataclass(frozen=True)
class Workflow:
    name: str
    folder: str  # the workflow's own folder in the workspace
    commands: tuple[str, ...]  # each one model reply, run with the workspace as working directory
    network: bool = False  # needs a registry
    network_steps: tuple[int, ...] = (0,)  # which commands need it (when `network`)
    needs: tuple[str, ...] = ()  # programs that must exist on the machine


def _cd(folder: str, *commands: str) -> tuple[str, ...]:
    return tuple(f"cd {folder} && {c}" for c in commands)


OFFLINE: tuple[Workflow, ...] = (
    Workflow("venv + local wheel", "py", _cd("py", "python3 -m venv .venv && .venv/bin/pip install --no-index "
                                                "dist/wfpkg-0.1-py3-none-any.whl",
                                                ".venv/bin/python -c 'import wfpkg; print(wfpkg.VALUE)' > out.txt")),
    Workflow("npm install ../localpkg + npm test", "npm",
             _cd("npm/app", "npm install ../localpkg", "npm test > test-output.txt"), needs=("npm",)),
    Workflow("make", "make", _cd("make", "make")),
    Workflow("git branch + commit", "gitbranch",
             _cd("gitbranch", "git checkout -b feature && echo more >> a.txt && git commit -am 'more on feature'")),
    Workflow("git merge", "gitmerge", _cd("gitmerge", "git merge --no-ff -m 'merge feature' feature")),
    Workflow("git stash", "gitstash", _cd("gitstash", "echo wip >> a.txt && git stash")),
    Workflow("mv", "mv", _cd("mv", "mv old.txt new.txt && mv olddir newdir")),
    Workflow("cache write under ~/.cache", "cache",
             _cd("cache", "mkdir -p ~/.cache/wf-tool && echo cached-value > ~/.cache/wf-tool/entry",
                 "cat ~/.cache/wf-tool/entry > from-cache.txt")),
    Workflow("script made executable and run", "script",
             _cd("script", "printf '#!/bin/sh\\necho ran > ran.txt\\n' > run.sh && chmod +x run.sh && ./run.sh")),
    Workflow("tar", "tar", _cd("tar", "tar czf src.tgz src && mkdir out && tar xzf src.tgz -C out")),
    Workflow("new repository with a commit", "newrepo",
             _cd("newrepo", "git init repo && cd repo && echo hi > README && git add README && git commit -m init")),
    Workflow("sed -i", "sed", _cd("sed", "sed -i 's/old/new/g' conf.txt")),
)


# --- the workspace, built outside LACA ---------------------------------------------------------------------------

def _git(cwd: Path, *args: str, home: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**_base_env(home)})


def _base_env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL")) and not
            k.startswith(("GIT_", "XDG_", "VIRTUAL_ENV", "npm_"))}
    rust = {"RUSTUP_HOME": RUSTUP_HOME} if os.path.isdir(RUSTUP_HOME) else {}
    return {**keep, **rust, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache")}


def make_home(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / ".gitconfig").write_text(GITCONFIG)
    return path


def _wheel(dest: Path) -> None:
    """A pure-Python wheel written by hand (no build tools, no network): a module and its metadata."""
    files = {"wfpkg/__init__.py": b"VALUE = 42\n",
             "wfpkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: wfpkg\nVersion: 0.1\n",
             "wfpkg-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                                          b"Tag: py3-none-any\n"}
    record = "".join(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},"
                     f"{len(d)}\n" for n, d in files.items()) + "wfpkg-0.1.dist-info/RECORD,,\n"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("wfpkg-0.1.dist-info/RECORD", record)


def build_workspace(ws: Path, home: Path) -> None:
    """The starting state every run copies: one folder per workflow."""
    _wheel(ws / "py" / "dist" / "wfpkg-0.1-py3-none-any.whl")
    lib = ws / "npm" / "localpkg"
    lib.mkdir(parents=True)
    (lib / "package.json").write_text('{"name": "localpkg", "version": "1.0.0", "main": "index.js"}\n')
    (lib / "index.js").write_text("module.exports = (a, b) => a + b;\n")
    app = ws / "npm" / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "app", "version": "1.0.0", "private": true,\n'
                                      ' "scripts": {"test": "node test.js"}}\n')
    (app / "test.js").write_text("const add = require('localpkg');\nif (add(2, 3) !== 5) process.exit(1);\n"
                                 "console.log('ok 1 - localpkg adds');\n")
    (ws / "make").mkdir()
    (ws / "make" / "hello.c").write_text('#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n')
    (ws / "make" / "Makefile").write_text("all: out.txt\n\nhello: hello.c\n\tcc -O0 -o hello hello.c\n\n"
                                          "out.txt: hello\n\t./hello > out.txt\n")
    for name in ("gitbranch", "gitmerge", "gitstash"):
        repo = ws / name
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main", home=home)
        (repo / "a.txt").write_text("one\n")
        _git(repo, "add", "a.txt", home=home)
        _git(repo, "commit", "-q", "-m", "first", home=home)
    _git(ws / "gitmerge", "checkout", "-q", "-b", "feature", home=home)
    (ws / "gitmerge" / "b.txt").write_text("feature work\n")
    _git(ws / "gitmerge", "add", "b.txt", home=home)
    _git(ws / "gitmerge", "commit", "-q", "-m", "feature work", home=home)
    _git(ws / "gitmerge", "checkout", "-q", "main", home=home)
    (ws / "mv" / "olddir").mkdir(parents=True)
    (ws / "mv" / "old.txt").write_text("moving\n")
    (ws / "mv" / "olddir" / "inner.txt").write_text("inside\n")
    (ws / "cache").mkdir()
    (ws / "script").mkdir()
    (ws / "tar" / "src" / "sub").mkdir(parents=True)
    (ws / "tar" / "src" / "one.txt").write_text("1\n")
    (ws / "tar" / "src" / "sub" / "two.sh").write_text("#!/bin/sh\n")
    (ws / "tar" / "src" / "sub" / "two.sh").chmod(0o755)
    (ws / "newrepo").mkdir()
    (ws / "sed").mkdir()
    (ws / "sed" / "conf.txt").write_text("old value\nkeep\nold again\n")


# --- the direct run ----------------------------------------------------------------------------------------------

def run_direct(ws: Path, home: Path, commands: tuple[str, ...], timeout: float = 300) -> list[int]:
    """Each command with `bash -c` in `ws`, HOME a throwaway copy of the test home (never the user's)."""
    codes = []
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=ws, env=_base_env(home), capture_output=True,
                              timeout=timeout)
        codes.append(done.returncode)
    return codes


# --- the LACA run ------------------------------------------------------------------------------------------------

def laca_env(home: Path, base_url: str) -> dict[str, str]:
    return {**_base_env(home), "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": base_url}


def laca_command(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "run_framework.py"), "--no-mcp", *args]


def run_laca_oneshot(ws: Path, home: Path, commands: list[str], *args: str,
                     timeout: float = 900) -> subprocess.CompletedProcess:
    """One `laca -p` run in which a scripted model asks for `commands`, one per reply, then says done."""
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.script import Reply, ToolCallSpec

    with FakeOpenAIServer() as server:
        server.enqueue(*[Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
            "command": c, "icerc_full_text": f"Intent: an everyday step\nCommand: {c}"})]) for c in commands],
            Reply(text="done"))
        return subprocess.run(laca_command(*args, "-p", "run the workflows"), cwd=ws,
                              env=laca_env(home, server.base_url), capture_output=True, text=True, timeout=timeout)


# --- the end states ----------------------------------------------------------------------------------------------

@dataclass
class State:
    files: dict[str, str] = field(default_factory=dict)  # path -> "mode kind digest"
    git: dict[str, str] = field(default_factory=dict)  # repository -> log, branches, status, stash


def _normal(data: bytes, roots: dict[str, str]) -> bytes:
    for real, mark in roots.items():
        data = data.replace(real.encode(), mark.encode())
    return data


def _archive(path: Path) -> str:
    """A tar archive by its members (names, modes, contents), not its bytes (which hold the files' times)."""
    try:
        with tarfile.open(path) as t:
            members = [(m.name, m.mode, hashlib.sha256(t.extractfile(m).read()).hexdigest()  # type: ignore[union-attr]
                        if m.isfile() else m.type.decode()) for m in t.getmembers()]
        return repr(sorted(members))
    except (tarfile.TarError, OSError) as e:
        return f"unreadable archive: {e}"


def _zip(path: Path) -> str:
    """A wheel or zip by its members (names and contents), not its bytes (which hold the files' times)."""
    try:
        with zipfile.ZipFile(path) as z:
            return repr(sorted((i.filename, hashlib.sha256(RECORD_HASH.sub(b",", z.read(i))).hexdigest()[:16])
                               for i in z.infolist()))
    except (zipfile.BadZipFile, OSError) as e:
        return f"unreadable zip: {e}"


def snapshot(folder: Path, roots: dict[str, str], home: Path) -> State:
    """Contents, modes and symlink targets, with the run's own absolute paths replaced by marks; compiled Python and
    cargo's target/ by presence only (they hold source times and build paths); archives by their members; git
    repositories by what git says, not their raw files."""
    state = State()
    if not folder.exists():
        return state
    for dirpath, dirnames, filenames in os.walk(folder):
        base = Path(dirpath)
        if ".git" in dirnames:
            state.git[base.relative_to(folder).as_posix()] = _git_state(base, home)
            dirnames.remove(".git")
        for name in sorted(dirnames) + sorted(filenames):
            p = base / name
            rel = p.relative_to(folder).as_posix()
            if rel.startswith("target/") and "/incremental/" in rel + "/":
                continue  # cargo's incremental sessions: named at random on every build, direct or not
            st = p.lstat()
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                state.files[rel] = "link " + _normal(os.readlink(p).encode(), roots).decode()
            elif stat.S_ISDIR(st.st_mode):
                state.files[rel] = f"{mode:o} dir"
            elif name.endswith(".pyc") or rel.startswith("target/"):
                state.files[rel] = f"{mode:o} built"  # holds source times, or the build's own paths in debug info
            elif name.endswith((".tgz", ".tar", ".tar.gz")):
                state.files[rel] = f"{mode:o} {_archive(p)}"
            elif name.endswith((".whl", ".zip")):
                state.files[rel] = f"{mode:o} {_zip(p)}"
            else:
                data = _normal(p.read_bytes(), roots)
                if name == "RECORD" and base.name.endswith(".dist-info"):
                    data = RECORD_HASH.sub(b",", data)  # hashes of files that hold the run's own paths
                digest = hashlib.sha256(data).hexdigest()[:16]
                state.files[rel] = f"{mode:o} {digest}"
    return state


RECORD_HASH = re.compile(rb",sha256=[^,]*,\d*")
HEX = re.compile(r"\b[0-9a-f]{7,40}\b")


def _git_state(repo: Path, home: Path) -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, env=_base_env(home), capture_output=True, text=True)
        return done.stdout + (f"(exit {done.returncode})" if done.returncode else "")

    return "\n".join([git("log", "--all", "--format=%s|%an|%ae|%T", "--graph").replace("|", " "),
                      git("branch", "--list"), git("status", "--porcelain"),
                      HEX.sub("<hash>", git("stash", "list", "--format=%gs")), git("rev-parse", "--abbrev-ref",
                                                                                       "HEAD")])


def differences(a: State, b: State, limit: int = 4) -> list[str]:
    """What differs between two end states, said briefly (first `limit` differences)."""
    out = []
    for rel in sorted(set(a.files) | set(b.files)):
        if a.files.get(rel) != b.files.get(rel):
            out.append(f"{rel}: laca={a.files.get(rel, 'absent')} direct={b.files.get(rel, 'absent')}")
    for repo in sorted(set(a.git) | set(b.git)):
        if a.git.get(repo) != b.git.get(repo):
            out.append(f"git {repo or '.'}: laca={a.git.get(repo)!r} direct={b.git.get(repo)!r}")
    return out[:limit]


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True)


def missing_programs(flow: Workflow) -> list[str]:
    return [p for p in flow.needs if shutil.which(p) is None]
