"""What runs later: the one table of workspace files another program runs or reads as code on its own, and which
of them run without the user naming anything (see docs/ARCHITECTURE.md, "Two layers of safety").

Pure: names and, for the few files that name other files (`.yarnrc.yml`'s `yarnPath`, pyproject's
`backend-path`, what `.envrc` sources), their text. The gate (`gate.py`) asks `judge` for every changed path.

Two kinds:
- **named**: runs when the user runs the program that reads it (`make` runs the Makefile, `npm install` runs
  package.json's scripts). It lands, named first in the result.
- **implicit**: runs with no program named for it: Python start-up files in any environment, editor tasks run
  when the folder opens, direnv's `.envrc` and what it sources, build wrappers a build tool downloads and runs,
  CI workflows and local actions, git hooks managers. In auto mode a change set holding one is held and asked
  about before anything of it lands; in the other modes it lands, named first.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class RunsLater:
    why: str
    implicit: bool = False  # runs without the user naming any program


def _n(why: str) -> RunsLater:
    return RunsLater(why)


def _i(why: str) -> RunsLater:
    return RunsLater(why, implicit=True)


#: By file name, in any folder.
BY_NAME: dict[str, RunsLater] = {
    "Makefile": _n("make runs its recipes"), "GNUmakefile": _n("make runs its recipes"),
    "makefile": _n("make runs its recipes"),
    "package.json": _n("npm runs its scripts (install hooks included)"),
    "pyproject.toml": _n("pip and build tools run its build backend"), "setup.py": _n("pip and build tools run it"),
    "setup.cfg": _n("build tools read it"), "tox.ini": _n("tox runs its commands"), "noxfile.py": _n("nox runs it"),
    "conftest.py": _n("pytest imports it"), "pytest.ini": _n("pytest loads the plugins it names"),
    "AGENTS.md": _n("coding agents read it as instructions"), "CLAUDE.md": _n("coding agents read it as instructions"),
    "GEMINI.md": _n("coding agents read it as instructions"),
    ".cursorrules": _n("coding agents read it as instructions"),
    "Justfile": _n("just runs its recipes"), "justfile": _n("just runs its recipes"),
    ".justfile": _n("just runs its recipes"),
    ".npmrc": _n("npm reads it in this folder (script-shell, node-options, git can name programs)"),
    ".yarnrc.yml": _n("yarn runs its yarnPath on every yarn command"), ".yarnrc": _n("yarn runs its yarn-path"),
    ".pnpmfile.cjs": _n("pnpm runs its hooks on install"),
    "rust-toolchain.toml": _n("rustup runs the toolchain it names"),
    "rust-toolchain": _n("rustup runs the toolchain it names"), "build.rs": _n("cargo builds and runs it"),
    "Gemfile": _n("bundler runs it as Ruby"), "Rakefile": _n("rake runs its tasks"),
    ".bazelrc": _n("bazel reads it as options"),
    # implicit: nobody names a program for these
    "sitecustomize.py": _i("Python runs it at every start"), "usercustomize.py": _i("Python runs it at every start"),
    ".envrc": _i("direnv runs it when you enter the folder"),
    ".pre-commit-config.yaml": _i("pre-commit runs its hooks on git commit"),
    "lefthook.yml": _i("lefthook runs its git hooks"), "lefthook.yaml": _i("lefthook runs its git hooks"),
    ".gitlab-ci.yml": _i("CI runs its jobs"), "Jenkinsfile": _i("CI runs it"),
    ".mise.toml": _i("mise runs its hooks and tasks when you enter the folder"),
    "mise.toml": _i("mise runs its hooks and tasks when you enter the folder"),
    ".dir-locals.el": _i("Emacs evaluates it when a file in this folder opens"),
    ".exrc": _i("vim and neovim (exrc) run it in this folder"), ".nvim.lua": _i("neovim (exrc) runs it in this folder"),
    ".nvimrc": _i("neovim (exrc) runs it in this folder"),
    "gradlew": _i("the Gradle wrapper: IDEs and builds run it"), "gradlew.bat": _i("the Gradle wrapper"),
    "mvnw": _i("the Maven wrapper: IDEs and builds run it"), "mvnw.cmd": _i("the Maven wrapper"),
    "gradle-wrapper.properties": _i("gradlew downloads and runs what it names"),
    "gradle-wrapper.jar": _i("gradlew runs it"),
    "maven-wrapper.properties": _i("mvnw downloads and runs what it names"), "maven-wrapper.jar": _i("mvnw runs it"),
}
#: By the last two parts of the path.
BY_PARTS: dict[tuple[str, str], RunsLater] = {
    (".vscode", "tasks.json"): _i("VS Code runs its tasks (folder-open tasks without asking)"),
    (".vscode", "launch.json"): _n("VS Code runs it to debug"),
    (".vscode", "settings.json"): _i("VS Code settings name programs it runs when the folder opens"),
    (".cargo", "config.toml"): _n("cargo runs the runners, wrappers and aliases it names"),
    (".cargo", "config"): _n("cargo runs the runners, wrappers and aliases it names"),
    (".circleci", "config.yml"): _i("CI runs its jobs"),
    (".mvn", "extensions.xml"): _i("maven loads the extensions it names"), (".mvn", "jvm.config"): _n("maven passes "
                                                                                                   "it to java"),
    (".devcontainer", "devcontainer.json"): _i("editors run its commands when the folder opens in a container"),
    (".github", "copilot-instructions.md"): _n("coding agents read it as instructions"),
}
#: Every file below these folders (matched at any depth).
BY_FOLDER: dict[str, RunsLater] = {
    ".github/workflows": _i("CI runs its workflows"), ".github/actions": _i("CI runs its local actions"),
    ".husky": _i("husky runs its git hooks"), ".idea/runConfigurations": _i("the IDE runs its run configurations"),
    ".run": _i("the IDE runs its run configurations"), ".cursor/rules": _n("coding agents read them as instructions"),
}
PTH = _i("Python runs its import lines at every start")
ACTIVATE = _i("a virtual environment's activation script: shells and editors run it")
MAKE_INCLUDE = _n("make runs it where a Makefile includes it")


def judge(rel: str) -> RunsLater | None:
    """What runs `rel` later, or None: plain data."""
    parts = rel.split("/")
    name = parts[-1]
    if name in BY_NAME:
        return BY_NAME[name]
    if name.endswith(".pth"):
        return PTH
    if len(parts) >= 2 and parts[-2] in ("bin", "Scripts") and (
            name == "activate" or name.startswith("activate.") or name in ("Activate.ps1", "activate_this.py")):
        return ACTIVATE
    if name.endswith(".mk"):
        return MAKE_INCLUDE
    if len(parts) >= 2 and (parts[-2], name) in BY_PARTS:
        return BY_PARTS[(parts[-2], name)]
    for folder, why in BY_FOLDER.items():
        if f"/{rel}".find(f"/{folder}/") >= 0:
            return why
    return None


# ---- files other files name --------------------------------------------------------------------------
#: The files whose text names other files that run, and what reads them.
NAMERS = (".yarnrc.yml", "pyproject.toml", ".envrc")
_ENVRC_SOURCE = re.compile(r"^\s*(?:source_env(?:_if_exists)?|source|\.)\s+(['\"]?)([^'\"\s;&|]+)\1")


def named_by(name: str, text: str) -> dict[str, RunsLater]:
    """The paths (relative to the namer's folder) that the file `name` with this text makes run implicitly."""
    if name == ".yarnrc.yml":
        for line in text.splitlines():
            m = re.match(r"^yarnPath\s*:\s*(['\"]?)(.+?)\1\s*(?:#.*)?$", line)
            if m:
                return {_norm(m.group(2)): _i("the Yarn release .yarnrc.yml's yarnPath runs on every yarn command")}
        return {}
    if name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return {}
        system = data.get("build-system") or {}
        paths, backend = system.get("backend-path") or [], system.get("build-backend")
        if not isinstance(paths, list) or not isinstance(backend, str) or not backend.strip():
            return {}
        # The backend module, found in backend-path as Python finds it: `pkg.mod:obj` is pkg/mod.py or the
        # package pkg/mod/, below each listed folder (all of it could be imported; the module surely is).
        module = backend.split(":", 1)[0].strip().replace(".", "/")
        why = _i("pyproject's backend-path: pip and build tools import the build backend from here")
        out: dict[str, RunsLater] = {}
        for p in paths:
            if isinstance(p, str):
                base = _norm(p)
                prefix = "" if base == "." else base + "/"
                out[f"{prefix}{module}.py"] = why
                out[f"{prefix}{module}"] = why
        return out
    if name == ".envrc":
        sourced = _i("direnv runs it: .envrc sources it")
        return {_norm(m.group(2)): sourced for m in map(_ENVRC_SOURCE.match, text.splitlines())
                if m and not m.group(2).startswith("$")}
    return {}


def _norm(path: str) -> str:
    return path.strip().removeprefix("./").rstrip("/") or "."


def named_paths(folder: str, read: Callable[[str], bytes | None]) -> dict[str, RunsLater]:
    """The paths below or beside `folder` (workspace-relative, '' the top) that its namer files name, each
    workspace-relative and lexically normalised; paths leaving the workspace are left out (they are not ours)."""
    import posixpath

    out: dict[str, RunsLater] = {}
    for namer in NAMERS:
        data = read(f"{folder}/{namer}" if folder else namer)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        for rel, why in named_by(namer, text).items():
            if rel.startswith("/"):
                continue
            joined = posixpath.normpath(posixpath.join(folder or ".", rel))
            if joined == ".." or joined.startswith("../"):
                continue
            out["" if joined == "." else joined] = why
    return out


# ---- saying it ---------------------------------------------------------------------------------------
def by_folder(found: dict[str, str], *, why: bool = True) -> list[str]:
    """One item per top folder (with a count) or per top-level file: `npm install`'s 400 package.json files are
    one line, not 9 KB, paid for on every later request. Order: as found."""
    groups: dict[str, list[str]] = {}
    for rel in found:
        top = rel.split("/", 1)[0] if "/" in rel else rel
        groups.setdefault(top, []).append(rel)
    out: list[str] = []
    for top, rels in groups.items():
        if len(rels) == 1:
            rel = rels[0]
            out.append(f"{rel} ({found[rel]})" if why else rel)
            continue
        reasons: dict[str, int] = {}
        for rel in rels:
            reasons[found[rel]] = reasons.get(found[rel], 0) + 1
        common = max(reasons, key=lambda r: reasons[r])
        more = f"; {len(reasons) - 1} other reason{'s' if len(reasons) > 2 else ''}" if len(reasons) > 1 else ""
        out.append(f"{top}/ ({len(rels)} files: {common}{more})" if why else f"{top}/ ({len(rels)} files)")
    return out
