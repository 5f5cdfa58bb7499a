"""What a sandboxed command sees of the home directory: an empty folder with, on top, only what the allowlist
(`home_allow.yaml`, plus `sandbox.home_allow` and `sandbox.home_caches`) names.

`HomeAllow` is the list (data); `home_mounts` turns it into mounts for one home (it looks at which entries
exist, nothing else); `write_config_copies` makes the sanitised copies (the only writing here). The view
(`view.py`) mounts the empty home before anything inside it, so a workspace under the home and a home under
/tmp are both shown.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal

ALLOW_FILE = Path(__file__).with_name("home_allow.yaml")
MountKind = Literal["ro", "rw", "file"]


@dataclass(frozen=True)
class ConfigEntry:
    path: str  # relative to the home
    kind: str  # a key of sanitise.KINDS


@dataclass(frozen=True)
class HomeAllow:
    """The allowlist, paths relative to the home. `source` names where it came from (for error messages)."""

    toolchains: tuple[str, ...] = ()
    config: tuple[ConfigEntry, ...] = ()
    caches: tuple[str, ...] = ()
    source: str = str(ALLOW_FILE)
    quiet: tuple[str, ...] = ()  # written by tools as they run: not named in the "not kept" note

    def extended(self, read_only: Iterable[str] = (), caches: Iterable[str] = (), *,
                 home: Path, where: str = "config") -> "HomeAllow":
        """With the user's own entries (`~/x`, `x` or an absolute path under `home`); a path outside the home
        is a ConfigError naming `where`."""
        more_ro = tuple(relative_to_home(p, home, where, "sandbox.home_allow") for p in read_only)
        more_rw = tuple(relative_to_home(p, home, where, "sandbox.home_caches") for p in caches)
        return HomeAllow(tuple(dict.fromkeys(self.toolchains + more_ro)), self.config,
                         tuple(dict.fromkeys(self.caches + more_rw)), self.source, self.quiet)


@dataclass(frozen=True)
class HomeMount:
    kind: MountKind  # ro: a read-only bind; rw: a writable bind of a LACA cache; file: a sanitised copy
    rel: str  # relative to the home
    source: str  # what is bound (for `file`, the real file the copy is made of)
    sanitiser: str = ""  # `file` only


@dataclass(frozen=True)
class HomeView:
    """What one command sees of the home: mounted in this order on an empty folder at `home`."""

    home: str
    mounts: tuple[HomeMount, ...] = field(default_factory=tuple)
    quiet: tuple[str, ...] = ()

    def shown(self, kind: MountKind) -> list[str]:
        return [m.rel for m in self.mounts if m.kind == kind]


def relative_to_home(entry: str, home: Path, where: str, key: str) -> str:
    from framework_core.errors import ConfigError

    text = str(entry).strip()
    if text.startswith("~/"):
        text = text[2:]
    path = Path(os.path.normpath(home / text)) if not os.path.isabs(text) else Path(os.path.normpath(text))
    try:
        rel = path.relative_to(home)
    except ValueError:
        raise ConfigError(f"{key}: '{entry}' is outside the home directory ({home}); only paths in the home can "
                          "be listed there (outside the home a command sees only the workspace and the system's "
                          "program folders)",
                          path=where) from None
    if not rel.parts or rel.parts[0] == "..":
        raise ConfigError(f"{key}: '{entry}' names the home itself or leaves it; list folders or files in it",
                          path=where)
    return rel.as_posix()


def load_allow(path: Path = ALLOW_FILE) -> HomeAllow:
    """Read the allowlist; an unreadable or malformed file is a ConfigError naming it."""
    from framework_core.errors import ConfigError
    from framework_core.config.yaml_load import load_yaml_mapping

    doc = load_yaml_mapping(path, what="home allowlist")
    data: dict[str, Any] = doc.data
    unknown = set(data) - {"toolchains", "config", "caches", "quiet"}
    if unknown:
        raise ConfigError(f"unknown section(s) {', '.join(sorted(unknown))}: the sections are toolchains, config, "
                          "caches and quiet", path=str(path))
    from framework_core.sandbox.sanitise import KINDS

    def rel_list(key: str) -> tuple[str, ...]:
        items = data.get(key) or []
        if not isinstance(items, list) or not all(isinstance(i, str) and i and not i.startswith(("/", "..")) for i
                                                  in items):
            raise ConfigError(f"'{key}' must be a list of paths relative to the home", path=str(path))
        return tuple(items)

    config: list[ConfigEntry] = []
    for item in data.get("config") or []:
        if not (isinstance(item, dict) and isinstance(item.get("path"), str) and item.get("kind") in KINDS):
            raise ConfigError(f"each 'config' entry needs a path and a kind ({', '.join(KINDS)}); got {item!r}",
                              path=str(path))
        config.append(ConfigEntry(item["path"], item["kind"]))
    return HomeAllow(rel_list("toolchains"), tuple(config), rel_list("caches"), str(path), rel_list("quiet"))


def home_mounts(allow: HomeAllow, home: Path, cache_root: Path | None) -> HomeView:
    """The mounts for `home`: existing toolchain entries read-only, existing config files as sanitised copies,
    then each cache writable from `cache_root` (None: no persistent caches). Order matters: a cache inside a
    toolchain folder (`go/pkg/mod` in `go`) comes after it."""
    mounts: list[HomeMount] = []
    real_home = os.path.realpath(home)
    for rel in allow.toolchains:
        for match in sorted(glob.glob(str(home / rel))) if glob.has_magic(rel) else [str(home / rel)]:
            target = os.path.realpath(match)
            if os.path.exists(match) and _leads_to_allowed(target, real_home, allow.toolchains):
                mounts.append(HomeMount("ro", Path(match).relative_to(home).as_posix(), target))
    listed = {m.rel for m in mounts}
    queue = [(rel, entry.kind) for entry in allow.config for rel in _matches(entry.path, home)]
    while queue and len(mounts) < 200:
        rel, kind = queue.pop(0)
        real = home / rel
        if rel in listed or not real.is_file():
            continue
        listed.add(rel)
        mounts.append(HomeMount("file", rel, str(real), kind) if kind != "ro" else
                      HomeMount("ro", rel, os.path.realpath(real)))
        if kind == "git":
            queue += [(r, k) for r, k in _git_files(real, home, real_home)]
    if cache_root is not None:
        for rel in allow.caches:
            mounts.append(HomeMount("rw", rel, str(cache_root / cache_folder(rel))))
    return HomeView(str(home), tuple(mounts), allow.quiet)


def _matches(rel: str, home: Path) -> list[str]:
    """A config entry's paths: itself, or for a pattern (`.nvm/versions/node/*/etc/npmrc`, a global config inside
    a toolchain shown read-only) each file it matches, relative to the home."""
    if not glob.has_magic(rel):
        return [rel]
    return [Path(m).relative_to(home).as_posix() for m in sorted(glob.glob(str(home / rel)))]


def cache_folder(rel: str) -> str:
    """Each cache is a folder of its own directly in the cache root (`.cargo/registry` -> `.cargo%registry`):
    never one inside another, where a command that can write the outer one could swap the inner one for a
    symlink that the next mount would follow."""
    return rel.replace("%", "%25").replace("/", "%")


def _git_files(config: Path, home: Path, real_home: str) -> list[tuple[str, str]]:
    """The files in the home a git config includes or names (`.gitconfig.local` with the identity, the
    excludes file, the commit template): shown too, an included config sanitised like the first."""
    from framework_core.sandbox.sanitise import git_references

    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for kind, written in git_references(text):
        path = Path(os.path.expanduser(written.replace("~/", str(home) + "/", 1) if written.startswith("~/")
                                       else written))
        path = path if path.is_absolute() else config.parent / path
        for root in (str(home), real_home):
            norm = os.path.normpath(path)
            if (norm + "/").startswith(root.rstrip("/") + "/") and norm != root:
                out.append((Path(norm).relative_to(root).as_posix(), kind))
                break
    return out


def _leads_to_allowed(target: str, real_home: str, entries: tuple[str, ...]) -> bool:
    """An entry that is a symlink elsewhere in the home (`.pyenv -> .ssh`) is shown only when it leads into
    another listed entry; one leading out of the home (`.nix-profile -> /nix/...`) is shown as it is."""
    if not (target + "/").startswith(real_home.rstrip("/") + "/"):
        return True
    rel = Path(target).relative_to(real_home)
    return any(rel == Path(e) or Path(e) in rel.parents or glob.has_magic(e) and rel.match(e) for e in entries)


def write_config_copies(view: HomeView, into: Path) -> dict[str, str]:
    """Sanitised copies of the view's config files in `into` (the sandbox's runtime folder), named by a digest of
    their content so a changed file gets a new copy; maps each rel path to its copy. A file that cannot be
    read is left out (the command then does not see it)."""
    from framework_core.sandbox.sanitise import KINDS

    out: dict[str, str] = {}
    for m in view.mounts:
        if m.kind != "file":
            continue
        try:
            text = Path(m.source).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        clean = KINDS[m.sanitiser](text)
        copy = into / (hashlib.sha256(f"{m.rel}\0{clean}".encode()).hexdigest()[:20] + ".conf")
        if not copy.exists():
            copy.write_text(clean, encoding="utf-8")
            copy.chmod(0o444)
        out[m.rel] = str(copy)
    return out


def ensure_caches(view: HomeView) -> HomeView:
    """Create the cache folders (mode 0700); a cache that cannot be made is left out of the view."""
    kept = []
    for m in view.mounts:
        if m.kind == "rw":
            try:
                os.makedirs(m.source, mode=0o700, exist_ok=True)
            except OSError:
                continue
        kept.append(m)
    return HomeView(view.home, tuple(kept), view.quiet)


#: Where a write the home does not keep could go instead, for the home files tools write most (said with the note).
INSTEAD = (
    (".npmrc", "npm config set --location=project writes the workspace's .npmrc, which lands"),
    (".gitconfig", "git config without --global writes the repository's own config (inert keys land)"),
    (".config/git/config", "git config without --global writes the repository's own config (inert keys land)"),
    (".local/lib", "a virtual environment in the workspace (python -m venv .venv) keeps installs"),
    (".local/bin", "a virtual environment in the workspace (python -m venv .venv) keeps installs"),
    (".cargo/bin", "cargo install --root <a folder in the workspace> keeps installed programs"),
)


def instead(written: Iterable[str]) -> list[str]:
    """For home paths a command wrote (relative to the home), what would have kept the work: one hint each."""
    hints: list[str] = []
    for rel in written:
        for prefix, hint in INSTEAD:
            if (rel == prefix or rel.startswith(prefix + "/")) and hint not in hints:
                hints.append(hint)
    return hints


def home_writes(scratch: Path, view: HomeView, limit: int = 6) -> list[str]:
    """What a command wrote in its throw-away home (relative paths, outermost only): everything in `scratch`
    that is not a mount point the sandbox made, or a folder holding one."""
    mounts = {m.rel for m in view.mounts}
    parents = {p.as_posix() for rel in mounts for p in Path(rel).parents if p.as_posix() != "."}
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(scratch):
        base = Path(dirpath).relative_to(scratch)
        keep_dirs = []
        for name in sorted(dirnames) + sorted(filenames):
            rel = (base / name).as_posix()
            if rel in mounts or rel in view.quiet:
                continue
            if rel in parents and name in dirnames:
                keep_dirs.append(name)
                continue
            found.append(rel)
            if len(found) > limit:
                return found
        dirnames[:] = keep_dirs
    return found
