"""The home one session's commands see: the allowlist's mounts (`home.py`) made ready on this machine, the
empty folder bound as each command's home (one left as new serves the next, `reuse.py`), and what is said when
a command wrote to it.

`HomeSetup` is held by the `Sandbox` (`sandbox.py`), which puts what it returns into each command's plan.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from framework_core.sandbox.environment import PROXY, offline_env
from framework_core.sandbox.home import HomeAllow, HomeView, home_mounts, home_writes, instead, load_allow
from framework_core.sandbox.plan import HomeBind
from framework_core.sandbox.reuse import Spare, home_pristine
from framework_core.sandbox.scratch import drop

CACHE_S = 30.0  # how long a home view is reused


@dataclass
class HomeSetup:
    home: Path
    workspace: Path
    runtime_dir: Callable[[], Path]  # the session's runtime folder, made on first use
    allow: HomeAllow | None = None  # None: the shipped list (home_allow.yaml)
    cache_root: Path | None = None  # where the commands' caches live; None: `sandbox-home` in LACA's cache dir
    _cache: dict = field(default_factory=dict)
    _spare: Spare = field(default_factory=Spare)

    def real(self) -> str | None:
        """The home to replace with an empty one; None where there is none to replace (missing, `/`) or the
        workspace is the home itself."""
        home = os.path.realpath(self.home)
        if home == "/" or not os.path.isdir(home) or home == os.path.realpath(self.workspace):
            return None
        return home

    def allowlist(self) -> HomeAllow:
        if self.allow is None:
            self.allow = load_allow()
        return self.allow

    def view(self, servers: bool = False) -> HomeView | None:
        """The home's mounts (sanitised copies written, caches created), reused for CACHE_S. Servers get caches
        of their own: a command (no network, no secret) could otherwise plant code in the npx or uv cache that
        the next `npx -y`/`uvx` server start runs with the network and the server's `env:`."""
        from framework_core.sandbox.home import ensure_caches, write_config_copies

        home = self.real()
        if home is None:
            return None
        now = time.monotonic()
        key = "home-servers" if servers else "home"
        cached = self._cache.get(key)
        if cached is not None and now - cached[0] <= CACHE_S:
            return cached[1]
        root = self.caches()
        if servers and root is not None:
            root = root.with_name(root.name + "-servers")
        view = ensure_caches(home_mounts(self.allowlist(), Path(home), root))
        copies_dir = self.runtime_dir() / "home-config"
        copies_dir.mkdir(exist_ok=True)
        copies = write_config_copies(view, copies_dir)
        view = HomeView(view.home, tuple(m if m.kind != "file" else type(m)("file", m.rel, copies[m.rel], m.sanitiser)
                                         for m in view.mounts if m.kind != "file" or m.rel in copies), view.quiet)
        self._cache[key] = (now, view)
        return view

    def caches(self) -> Path | None:
        """Where the commands' writable caches live."""
        if self.cache_root is None:
            from framework_core.config.dirs import user_cache_dir

            self.cache_root = user_cache_dir() / "sandbox-home"
        return self.cache_root

    def plan(self, view: HomeView | None, scratch: str) -> dict:
        """The home's part of a `SandboxPlan` (its keyword arguments); empty when the home is shown as it is."""
        if view is None:
            return {}
        binds = tuple(HomeBind(m.source, f"{view.home}/{m.rel}", m.kind == "rw") for m in view.mounts)
        return {"home": view.home, "home_source": scratch, "home_mounts": binds, "unset_env": PROXY,
                "offline_env": offline_env(os.environ)}

    def description(self) -> list[str]:
        """Lines for `laca doctor`: what a command sees of the home."""
        view = self.view()
        if view is None:
            return [f"home {self.home}: shown as it is, read-only, credential locations hidden (the workspace is "
                    "the home)" if self.real() is None and os.path.isdir(self.home) else
                    f"home {self.home}: not a folder"]
        out = [f"home {view.home}: an empty folder, thrown away after each command, showing only:"]
        for kind, label in (("ro", "read-only"), ("file", "copies without credentials"),
                            ("rw", f"writable caches (LACA's own, in {self.caches()})")):
            names = view.shown(kind)  # type: ignore[arg-type]
            out.append(f"  {label}: " + (", ".join("~/" + n for n in names) if names else "(none here)"))
        return out

    def take(self, view: HomeView | None) -> Path | None:
        """The folder bound as a command's home: the one the last command left exactly as new (`home_pristine`),
        else a new one. None when the home is shown as it is (no view)."""
        if view is None:
            return None
        spare = self._spare.take()
        if spare is not None:
            if home_pristine(spare, view):
                return spare
            drop(spare)
        return Path(tempfile.mkdtemp(prefix="home-", dir=self.runtime_dir()))

    def give_back(self, folder: Path, view: HomeView) -> list[str]:
        """After a command: a home left as new is kept for the next command (checked again then); any other is
        thrown away, as is one more than the single spare. Returns the note on what was written to it."""
        clean = home_pristine(folder, view)
        notes = [] if clean else written_note(home_writes(folder, view))
        unused = self._spare.keep(folder) if clean else folder
        if unused is not None:
            drop(unused)
        return notes

    def close(self) -> None:
        """Forget the spare home (it lies in the runtime folder, which the Sandbox removes)."""
        self._spare.take()


def written_note(paths: list[str]) -> list[str]:
    if not paths:
        return []
    shown = ", ".join("~/" + p for p in paths[:6]) + (" and more" if len(paths) > 6 else "")
    hints = "".join(f"; instead: {h}" for h in instead(paths))
    return [f"written to the home, not kept: {shown} (inside the sandbox the home is thrown away after each "
            f"command; only LACA's caches such as ~/.cache and ~/.npm persist; sandbox.home_caches adds one){hints}"]
