"""Git read by its settings: the workspace paths the configuration git would apply names, each a control path.

A user who set `core.hooksPath = .githooks` or `include.path = ../.gitconfig` made those workspace files part of
git's control: a command that lands `.githooks/pre-commit` or an included config with `core.fsmonitor` has
git run it on the user's next `git status` or `git commit`, outside any sandbox. So for each repository in the
workspace LACA reads the configuration git would apply (system, global, the repository's, the worktree's, and
every `include.path` and `includeIf.*.path`, all conditions counted as met) with its own parser
(`gitconfig.py`: never by running git on a configuration it has not judged), and every workspace path a
setting names is control: hook folders, included files, the attributes file, the commit template, and
programs given as paths (fsmonitor, editors, pagers, filter, diff and merge drivers, aliases that run a shell).

The reading is I/O; `settings_paths` (what a list of entries names) is pure.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from framework_core.sandbox.gitconfig import ConfigEntry, GitConfigError, parse_config

MAX_INCLUDE_DEPTH = 10  # git's own limit
MAX_CONFIG_BYTES = 1 << 20

#: Keys whose value is a path git reads as settings or as a template: (section, key).
PATH_KEYS: dict[tuple[str, str], str] = {
    ("core", "hookspath"): "git runs the hooks in this folder",
    ("core", "attributesfile"): "git reads it as attributes, which pick filter and diff drivers that run programs",
    ("commit", "template"): "git puts it in every commit message you edit",
}
#: Keys whose value is a command line git runs (section, key); `*` matches any subsection's key.
PROGRAM_KEYS = frozenset({
    ("core", "fsmonitor"), ("core", "editor"), ("core", "pager"), ("core", "sshcommand"), ("core", "askpass"),
    ("core", "gitproxy"), ("sequence", "editor"), ("gpg", "program"), ("diff", "external"),
    ("interactive", "difffilter"), ("credential", "helper"), ("uploadpack", "packobjectshook"),
    ("web", "browser"),
})
SUBSECTION_PROGRAM_KEYS: dict[str, frozenset[str]] = {
    "diff": frozenset({"command", "textconv"}), "filter": frozenset({"clean", "smudge", "process"}),
    "merge": frozenset({"driver"}), "difftool": frozenset({"cmd", "path"}), "mergetool": frozenset({"cmd", "path"}),
    "browser": frozenset({"cmd", "path"}), "man": frozenset({"cmd", "path"}), "gpg": frozenset({"program"}),
    "credential": frozenset({"helper"}), "remote": frozenset({"uploadpack", "receivepack"}),
}


@dataclass(frozen=True)
class Repo:
    gitdir: Path  # absolute
    top: Path  # the worktree git runs hooks and programs in (the git directory itself when bare)


@dataclass
class Reading:
    """What the settings of every repository name, and the files read to know it (for a cache to re-check)."""

    named: dict[str, str] = field(default_factory=dict)  # workspace-relative path -> why it is control
    files: dict[str, tuple[int, int] | None] = field(default_factory=dict)  # path -> (mtime_ns, size) or absent


def config_stack(repo: Repo, home: Path, env: Mapping[str, str]) -> list[Path]:
    """The files git reads for `repo`, in its order: system, global, repository, worktree."""
    out: list[Path] = []
    if env.get("GIT_CONFIG_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        out.append(Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if env.get("GIT_CONFIG_GLOBAL"):
        out.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = env.get("XDG_CONFIG_HOME") or str(home / ".config")
        out += [Path(xdg) / "git" / "config", home / ".gitconfig"]
    common = _commondir(repo.gitdir)
    out.append(common / "config")
    out.append(repo.gitdir / "config.worktree")
    return out


def read_settings(workspace: Path, gitdirs: list[str], home: Path, env: Mapping[str, str]) -> Reading:
    """Every workspace path the settings of the repositories at `gitdirs` (workspace-relative git directories)
    name, with why."""
    reading = Reading()
    ws = workspace.resolve()
    for rel in gitdirs or [".git"]:
        gitdir = ws / rel
        if not gitdir.is_dir():
            continue
        repo = Repo(gitdir, _top(gitdir))
        entries: list[tuple[ConfigEntry, Path]] = []
        for path in config_stack(repo, home, env):
            _collect(path, home, entries, reading, depth=0, seen=set(), workspace=ws)
        for entry, source in entries:
            for target, why in settings_paths(entry, source, repo, home):
                inside = _inside(target, ws)
                if inside:  # the workspace itself is never one control path: its files are judged one by one
                    reading.named.setdefault(inside, f"{entry.name} in {_show(source, home)}: {why}")
    return reading


def settings_paths(entry: ConfigEntry, source: Path, repo: Repo, home: Path) -> list[tuple[Path, str]]:
    """The paths one setting names (absolute, not resolved), with what git does with each. Pure."""
    sec, key, value = entry.section, entry.key, entry.value
    if not value:
        return []
    if (sec, key) in PATH_KEYS:
        return [(_expand(value, repo.top, home), PATH_KEYS[(sec, key)])]
    if sec in ("include", "includeif") and key == "path":
        return [(_expand(value, source.parent, home), "git reads it as settings (it can name programs git runs)")]
    program = ((sec, key) in PROGRAM_KEYS and entry.subsection is None) or (
        entry.subsection is not None and key in SUBSECTION_PROGRAM_KEYS.get(sec, frozenset()))
    if sec == "alias" and value.startswith("!"):
        program, value = True, value[1:]
    if sec == "submodule" and key == "update" and value.startswith("!"):
        program, value = True, value[1:]
    if sec == "pager" and entry.subsection is None:
        program = True
    if not program:
        return []
    return [(_expand(word, repo.top, home), "git runs it") for word in _words(value) if _pathlike(word)]


# ---- reading -----------------------------------------------------------------------------------------
def _collect(path: Path, home: Path, out: list[tuple[ConfigEntry, Path]], reading: Reading, *, depth: int,
             seen: set[Path], workspace: Path) -> None:
    """The entries of one config file and of the files it includes, in order (a file git cannot read, or that
    LACA cannot parse, adds nothing: git would refuse it too)."""
    if depth > MAX_INCLUDE_DEPTH or path in seen:
        return
    seen.add(path)
    try:
        st = os.stat(path)
    except OSError:
        reading.files[str(path)] = None
        return
    reading.files[str(path)] = (st.st_mtime_ns, st.st_size)
    if st.st_size > MAX_CONFIG_BYTES or not os.path.isfile(path):
        return
    try:
        entries = parse_config(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, GitConfigError):
        return
    for e in entries:
        out.append((e, path))
        if e.section in ("include", "includeif") and e.key == "path" and e.value:
            _collect(_expand(e.value, path.parent, home), home, out, reading, depth=depth + 1, seen=seen,
                     workspace=workspace)


def _commondir(gitdir: Path) -> Path:
    """A linked worktree's git directory shares its repository's config through `commondir`."""
    try:
        line = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gitdir
    return (gitdir / line) if line and not line.startswith("/") else Path(line) if line else gitdir


def _top(gitdir: Path) -> Path:
    """Where git runs a repository's hooks and programs: the folder holding `.git`, else the git directory."""
    return gitdir.parent if gitdir.name == ".git" else gitdir


def _expand(value: str, base: Path, home: Path) -> Path:
    if value == "~" or value.startswith("~/"):
        return home / value[2:]
    path = Path(value)
    return path if path.is_absolute() else base / path


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _pathlike(word: str) -> bool:
    return "/" in word and "://" not in word and not word.startswith("-")


def _inside(path: Path, workspace: Path) -> str | None:
    """`path` relative to the workspace (lexically normalised; a resolved link counts too), or None."""
    for candidate in (Path(os.path.normpath(path)), _resolved(path)):
        if candidate is None:
            continue
        try:
            rel = candidate.relative_to(workspace).as_posix()
        except ValueError:
            continue
        return "" if rel == "." else rel
    return None


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _show(path: Path, home: Path) -> str:
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)
