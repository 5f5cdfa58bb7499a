"""git commands that run programs the repository's configuration names: `git status` a core.fsmonitor hook
and clean filters, `git diff`, `log -p` and `show` textconv and external diff drivers (when .gitattributes
gives a file that driver). The policy reads no files, so the caller says which such keys the workspace's
repository has (`CallFacts.git_runs`, read by `sandbox/gitconfig.py`); with none, these commands stay Safe.
"""

from __future__ import annotations

import re

from framework_core.policy.git_objects import PATCHES, patch_cluster

#: Which subcommands each kind of key makes run a program.
_INDEX = frozenset("status diff add commit".split())  # compare the worktree (refresh)
_DIFFS = frozenset("diff log show whatchanged stash blame format-patch range-diff".split())
_KINDS = ((re.compile(r"core\.fsmonitor|filter\..+"), _INDEX), (re.compile(r"diff\..+"), _DIFFS))
_PATCH_ONLY = frozenset({"log", "whatchanged", "stash"})  # diff a file only when they print patches
GIT_GLOBAL_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"}


def _patches(words: tuple[str, ...]) -> bool:
    return any(w.split("=", 1)[0] in PATCHES or patch_cluster(w) for w in words)


def _subcommand(words: tuple[str, ...]) -> str:
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in GIT_GLOBAL_VALUE else 1
    return words[i] if i < len(words) else ""


def configured_problem(segments: tuple[tuple[str, ...], ...], git_runs: tuple[str, ...]) -> str:
    """Why a command that is otherwise read-only runs a program the repository configures ("" when none)."""
    if not git_runs:
        return ""
    for words in segments:
        if not words or words[0].rsplit("/", 1)[-1] != "git":
            continue
        sub = _subcommand(words)
        for key in git_runs:
            subs = next((s for rx, s in _KINDS if rx.fullmatch(key)), _INDEX | _DIFFS)  # includes: any of them
            if sub in subs and (sub not in _PATCH_ONLY or subs is _INDEX or _patches(words)):
                return f'"{" ".join(words)[:60]}": runs the program this repository\'s {key} names'
    return ""
