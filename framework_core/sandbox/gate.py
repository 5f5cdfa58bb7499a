"""What of a command's change set lands: each changed path judged `data`, `runs_later` or `control`.

Pure: the caller passes a `Tree`, the workspace as the command left it (its overlay over the real one), which
answers what kind of node a relative path is and, bounded, a file's bytes. Nothing here touches a disk.

- `control` is not applied, and is said with the path and what it would have done: LACA's own files, the
  user's `sandbox.protected_paths`, and under any git directory everything git does not keep as data.
- `runs_later` lands, but is named first wherever the change set is shown: files other tools run on their own.
- `data` lands.

Git directories are found the way git finds them (a folder named `.git`, or one with `HEAD` and either
`objects/` and `refs/` or a `commondir` file: bare repositories, `.git/modules/*`, `.git/worktrees/*`), in
the workspace as it was and as the command made it. Under one only git's own data is positive knowledge:
objects, refs, logs, the index, `HEAD` and the other `*_HEAD`, packed-refs, messages, rebase and sequencer
state, `info/exclude`, sample hooks, a config whose every key is inert (`gitconfig.py`), and the pointers git
writes for submodules and worktrees when they point into the repository's own `.git/modules/` or
`.git/worktrees/`. Everything else there is control (see docs/ARCHITECTURE.md, "Two layers of safety").
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal, Protocol

from framework_core.sandbox import runs_later
from framework_core.sandbox.gitconfig import config_findings, resolve_rel

Verdict = Literal["data", "runs_later", "control"]
Kind = Literal["absent", "file", "dir", "symlink", "fifo", "other"]

LACA_FILES: dict[str, str] = {
    ".laca": "LACA's workspace folder (rule files, custom commands): a rule here can auto-allow commands "
             "in the next session",
    ".mcp.json": "the next session would start the MCP servers named in this file",
    "framework_config.yaml": "LACA's workspace config: providers, MCP servers, tools, sandbox and permission "
                             "settings for the next session",
    "tools.yaml": "declares tools the model can call in the next session",
}
#: Files directly in a git directory that git keeps as data.
GIT_DATA_FILES = frozenset({"HEAD", "index", "packed-refs", "COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG",
                            "MERGE_MODE", "MERGE_RR", "description", "shallow", "AUTO_MERGE", "TAG_EDITMSG",
                            "NOTES_EDITMSG", "EDIT_DESCRIPTION"})
#: Folders in a git directory whose whole contents are git's data.
GIT_DATA_TREES = frozenset({"refs", "logs", "rebase-merge", "rebase-apply", "sequencer", "rr-cache", "lfs",
                            "notes-merge-partial"})
#: Folders in a git directory that may exist (their contents are judged one by one).
GIT_FOLDERS = GIT_DATA_TREES | {"objects", "hooks", "info", "modules", "worktrees", "branches"}
#: To-do lists whose `exec` lines git runs on `--continue`; files naming a merge strategy program.
TODO_FILES = frozenset({"rebase-merge/git-rebase-todo", "rebase-merge/git-rebase-todo.backup", "sequencer/todo"})
STRATEGY_FILES = frozenset({"rebase-merge/strategy"})
HOOKS_WHY = "git runs hooks on your next git command, outside any sandbox"
NOT_GIT_DATA = "not something git keeps as data: git may read it as settings or run it"


class Tree(Protocol):
    """The workspace as the command left it."""

    def kind(self, rel: str) -> Kind: ...

    def read(self, rel: str) -> bytes | None:
        """A file's bytes (None when it is not a file, or too large to judge)."""
        ...


@dataclass(frozen=True)
class Judged:
    rel: str
    verdict: Verdict
    reason: str = ""
    implicit: bool = False  # runs_later that runs with no program named for it (`runs_later.py`)


@dataclass
class Gate:
    tree: Tree
    workspace: str  # absolute: gitdir lines and commondir may name absolute paths
    protected: tuple[str, ...] = ()  # the user's sandbox.protected_paths, relative
    reasons: dict[str, str] = field(default_factory=dict)  # why a protected path is one, when not the user's list
    _git: dict[str, bool] = field(default_factory=dict)
    _chains: dict[str, list[str]] = field(default_factory=dict)
    _named: dict[str, dict[str, runs_later.RunsLater]] = field(default_factory=dict)

    def judge(self, rel: str) -> Judged:
        parts = rel.split("/")
        if parts[0] in LACA_FILES:
            return Judged(rel, "control", LACA_FILES[parts[0]])
        for p in self.protected:
            if rel == p or rel.startswith(p + "/"):
                return Judged(rel, "control", self.reasons.get(p, "listed in sandbox.protected_paths"))
        chain = self._git_chain(rel)
        if chain:
            return self._in_git(rel, chain)
        if parts[-1] == ".git":
            return self._git_file(rel)
        return Judged(rel, "data") if self.tree.kind(rel) == "dir" else self._runs_later(rel)

    # ---- what runs later ------------------------------------------------------------------------------
    def _runs_later(self, rel: str) -> Judged:
        """A file other programs run on their own (`runs_later.py`): by its name, or because a file in a folder
        above it names it (`yarnPath`, `backend-path`, what `.envrc` sources), as the command left them."""
        found = runs_later.judge(rel)
        if found is None:
            folder = rel
            while folder and found is None:
                folder = os.path.dirname(folder)
                for path, why in self._named_in(folder).items():
                    if path and (rel == path or rel.startswith(path + "/")):
                        found = why
                        break
        if found is None:
            return Judged(rel, "data")
        return Judged(rel, "runs_later", found.why, found.implicit)

    def _named_in(self, folder: str) -> dict[str, runs_later.RunsLater]:
        if folder not in self._named:
            def read(rel: str) -> bytes | None:
                return self.tree.read(rel) if self.tree.kind(rel) == "file" else None
            self._named[folder] = runs_later.named_paths(folder, read)
        return self._named[folder]

    # ---- finding git directories -----------------------------------------------------------------------
    def known_git_dirs(self) -> dict[str, bool]:
        """Every folder asked about so far: whether it is a git directory."""
        return dict(self._git)

    def is_git_dir(self, rel: str) -> bool:
        if rel not in self._git:
            self._git[rel] = self._shape(rel)
        return self._git[rel]

    def _shape(self, rel: str) -> bool:
        t = self.tree
        if t.kind(rel) != "dir":
            return False
        if os.path.basename(rel) == ".git":
            return True
        at = (rel + "/") if rel else ""
        if t.kind(at + "HEAD") not in ("file", "symlink"):
            return False
        if t.kind(at + "commondir") == "file":
            return True
        # git asks only that `objects` and `refs` can be entered (access X_OK, through symlinks): a symlink to a
        # folder, or even an executable file, passes. Any node there counts, so no such shape slips past.
        return t.kind(at + "objects") != "absent" and t.kind(at + "refs") != "absent"

    def _git_chain(self, rel: str) -> list[str]:
        """The git directories above `rel`, outermost first, each nested one only where git nests them.
        Memoised per folder and built top down, so a tree 1,200 levels deep costs no recursion."""
        folder = os.path.dirname(rel)
        todo: list[str] = []
        cur = folder
        while cur not in self._chains:
            todo.append(cur)
            if not cur:
                break
            cur = os.path.dirname(cur)
        for item in reversed(todo):
            base = self._chains.get(os.path.dirname(item), []) if item else []
            self._chains[item] = self._extend(base, item)
        return self._chains[folder]

    def _extend(self, chain: list[str], folder: str) -> list[str]:
        if not self.is_git_dir(folder):
            return chain
        if chain:
            inner = folder[len(chain[-1]) + 1:] if chain[-1] else folder
            nested = inner.startswith("modules/") or (inner.startswith("worktrees/") and inner.count("/") == 1)
            if not nested:
                return chain  # shaped like a repository, but not where git looks: the outer rules hold
        return [*chain, folder]

    # ---- under a git directory --------------------------------------------------------------------------
    def _in_git(self, rel: str, chain: list[str]) -> Judged:
        gd = chain[-1]
        inner = rel[len(gd) + 1:] if gd else rel
        parts = inner.split("/")
        kind = self.tree.kind(rel)
        if kind == "absent":
            return Judged(rel, "data", "")  # removing git's files runs nothing
        if kind == "dir":
            ok = parts[0] in GIT_FOLDERS and not (parts[0] in ("hooks", "info", "branches") and len(parts) > 1)
            ok = ok or parts[0] in ("modules", "worktrees")
            return Judged(rel, "data") if ok else Judged(rel, "control", NOT_GIT_DATA)
        if kind != "file":
            return Judged(rel, "control", f"git makes no {kind} here")
        top, name = parts[0], parts[-1]
        if top == "objects":
            if inner in ("objects/info/alternates", "objects/info/http-alternates"):
                return Judged(rel, "control", "alternates make git read objects from another repository")
            return Judged(rel, "data")
        if inner in TODO_FILES:
            return self._todo(rel)
        if inner == "sequencer/opts":
            return self._sequencer_opts(rel)
        if inner in STRATEGY_FILES:
            return Judged(rel, "control", "a merge strategy git would run on the next --continue")
        if top in GIT_DATA_TREES:
            return Judged(rel, "data")
        if inner in ("info/exclude", "info/refs", "info/packs", "info/sparse-checkout"):
            return Judged(rel, "data")
        if top == "hooks":
            if len(parts) == 2 and name.endswith(".sample"):
                return Judged(rel, "data")
            return Judged(rel, "control", HOOKS_WHY)
        if len(parts) > 1:
            return Judged(rel, "control", NOT_GIT_DATA)
        if name in GIT_DATA_FILES or name.endswith("_HEAD") or name.startswith("BISECT_"):
            return Judged(rel, "data")
        if name in ("config", "config.worktree"):
            found = config_findings(self.tree.read(rel), lambda p: resolve_rel(gd, p, self.workspace) is not None)
            if found:
                return Judged(rel, "control", "git config that git would act on: " + "; ".join(found[:4]))
            return Judged(rel, "data")
        worktree = self._worktree_admin(chain)
        if name == "commondir":
            return self._commondir(rel, gd, worktree)
        if name == "gitdir" and worktree:
            return self._worktree_gitdir(rel)
        if name == "locked" and worktree:
            return Judged(rel, "data")
        return Judged(rel, "control", NOT_GIT_DATA)

    @staticmethod
    def _worktree_admin(chain: list[str]) -> str | None:
        """The repository's git directory when the innermost one is its `worktrees/<name>`, else None."""
        if len(chain) < 2:
            return None
        outer, inner = chain[-2], chain[-1]
        rest = inner[len(outer) + 1:] if outer else inner
        return outer if rest.startswith("worktrees/") and rest.count("/") == 1 else None

    def _commondir(self, rel: str, gd: str, owner: str | None) -> Judged:
        target = _first_line(self.tree.read(rel))
        where = resolve_rel(gd, target, self.workspace) if target else None
        if owner is not None and where == owner:
            return Judged(rel, "data")
        return Judged(rel, "control", f"commondir points git at {target or '(unreadable)'}, not at this "
                      "worktree's own repository: git would use that folder's config and hooks")

    def _worktree_gitdir(self, rel: str) -> Judged:
        target = _first_line(self.tree.read(rel)) or ""
        if resolve_rel("", target, self.workspace) is not None:
            return Judged(rel, "data")
        wt = os.path.dirname(target) if target.endswith("/.git") else target
        return Judged(rel, "control", f"a git worktree outside the workspace ({wt}): only the workspace's "
                      "changes land, so that worktree does not exist for you; make it inside the workspace "
                      "instead (for example `git worktree add worktrees/NAME`)")

    def _todo(self, rel: str) -> Judged:
        """A rebase or cherry-pick to-do list: data, unless it has `exec` lines, which git runs on the next
        `git rebase --continue`, outside any sandbox."""
        data = self.tree.read(rel)
        if data is None:
            return Judged(rel, "control", "a to-do list LACA could not read: it may hold exec lines git runs")
        for line in data.decode("utf-8", "replace").splitlines():
            word = line.strip().split(" ", 1)[0]
            if word in ("exec", "x"):
                return Judged(rel, "control", "its exec lines run on your next git rebase --continue, outside "
                              "any sandbox")
        return Judged(rel, "data")

    def _sequencer_opts(self, rel: str) -> Judged:
        """A cherry-pick's or revert's options: data unless they name a merge strategy or a signing program."""
        entries = config_findings(self.tree.read(rel), lambda p: False)
        if entries and not all(e.startswith("options.") for e in entries):
            return Judged(rel, "control", "options git could not read")
        active = [e for e in entries if e.split(" ", 1)[0] in ("options.strategy", "options.gpg-sign")]
        if active:
            return Judged(rel, "control", "names a program git runs on --continue: " + "; ".join(active))
        return Judged(rel, "data")

    # ---- a .git file -------------------------------------------------------------------------------------
    def _git_file(self, rel: str) -> Judged:
        kind = self.tree.kind(rel)
        if kind in ("absent", "dir"):
            return Judged(rel, "data")
        if kind != "file":
            return Judged(rel, "control", "a .git symlink leads git to a repository LACA does not check")
        line = _first_line(self.tree.read(rel)) or ""
        target = line[len("gitdir:"):].strip() if line.startswith("gitdir:") else ""
        folder = os.path.dirname(rel)
        where = resolve_rel(folder, target, self.workspace) if target else None
        if where is not None and self._owned_gitdir(where, folder):
            return Judged(rel, "data")
        return Judged(rel, "control", f"a .git file sends git to {target or '(no gitdir line)'}, not into this "
                      "repository's own .git/modules or .git/worktrees: git would use that folder's config "
                      "and hooks")

    def _owned_gitdir(self, where: str, folder: str) -> bool:
        """`where` is a submodule's git directory in `.git/modules/` of a repository holding `folder`, or a
        worktree's in `.git/worktrees/` of a repository in the workspace."""
        if not self.is_git_dir(where):
            return False
        chain = self._git_chain(where + "/HEAD")
        if len(chain) < 2 or chain[-1] != where:
            return False
        outer = chain[-2]
        rest = where[len(outer) + 1:] if outer else where
        if rest.startswith("worktrees/") and rest.count("/") == 1:
            return True
        owner = os.path.dirname(outer) if os.path.basename(outer) == ".git" else None
        if owner is None or not rest.startswith("modules/"):
            return False
        return owner == "" or folder == owner or folder.startswith(owner + "/")


def _first_line(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.splitlines()[0].strip() if text.strip() else ""
