"""Programs whose safety depends on a sub-language: git's options, sed and awk scripts."""

from __future__ import annotations

import re

from framework_core.policy.levels import Verdict
from framework_core.policy.programs_base import Recurse, confirm, read_only_args, safe

GIT_SAFE = {"status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "cat-file", "describe",
            "shortlog", "grep", "reflog", "count-objects", "version", "help", "whatchanged", "merge-base", "name-rev",
            "show-ref", "for-each-ref", "rev-list", "check-ignore", "annotate", "range-diff", "diff-tree",
            "diff-files", "diff-index", "var", "ls-remote", "show-branch", "cherry", "verify-commit", "fsck"}
GIT_BAD_OPTS = ("--output", "--ext-diff", "--textconv", "--upload-pack", "--receive-pack", "--exec", "-O",
                "--open-files-in-pager", "--paginate")
def git(argv: list[str], recurse: Recurse) -> Verdict:
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].startswith("-"):
        opt = args[i]
        if opt == "-c" or opt.startswith("--config-env") or opt.startswith("-c"):
            return confirm(argv, "git -c sets config that can run commands (e.g. core.fsmonitor, core.pager)")
        if opt.startswith(("--git-dir", "--work-tree")):
            return confirm(argv, f"git {opt} points git at another repository's config")
        if opt in ("-C", "--namespace"):
            if opt in ("--git-dir", "--work-tree"):
                return confirm(argv, f"git {opt} points git at another repository's config")
            i += 2
            continue
        if opt in ("-p", "--paginate", "--exec-path") or opt.startswith("--exec-path="):
            return confirm(argv, f"git {opt} may run external programs")
        i += 1
    if i >= len(args):
        return safe(argv, "only prints git usage")
    sub, rest = args[i], args[i + 1:]
    for r in rest:
        if r.startswith(GIT_BAD_OPTS) and not r.startswith("--output-indicator"):
            return confirm(argv, f"git option {r} writes files or runs external programs")
    if sub in GIT_SAFE:
        if sub == "reflog" and rest[:1] not in ([], ["show"]) and not rest[0].startswith("-"):
            return confirm(argv, "git reflog subcommand changes the reflog")
        return safe(argv, f"git {sub} is read-only")
    listing = {"branch": {"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes",
                          "--contains", "--merged", "--no-merged", "--sort", "--format", "--no-color", "--color"},
               "tag": {"-l", "--list", "-n", "--sort", "--contains", "--format"},
               "remote": {"-v", "--verbose"}, "stash": {"list", "show"}, "worktree": {"list"},
               "submodule": {"status"}, "config": {"--get", "--list", "-l", "--get-all", "--get-regexp", "--show-origin"}}
    if sub in ("stash", "worktree", "submodule", "config") and (not rest or rest[0] not in listing[sub]):
        return confirm(argv, f"git {sub} changes the repository")
    if sub in listing:
        allowed = listing[sub]
        if not rest or all(r in allowed or (r.startswith("--") and r.split("=")[0] in allowed) for r in rest[:1]) and \
                (sub not in ("branch", "tag", "remote") or all(r.startswith("-") for r in rest)):
            if sub == "remote" and rest and rest[0] in ("get-url", "show"):
                return safe(argv, "git remote query is read-only")
            return safe(argv, f"git {sub} listing is read-only")
        if sub == "remote" and rest and rest[0] == "get-url":
            return safe(argv, "git remote get-url is read-only")
    if sub == "push" and any(r in ("--force", "-f", "--force-with-lease", "--mirror", "--delete") for r in rest):
        return confirm(argv, "git push that rewrites or deletes remote history")
    return confirm(argv, f"git {sub} changes the repository or talks to a remote")


SED_EXEC = re.compile(r"(^|[;\n{}])\s*(\d+|\$|/[^/]*/)?\s*(,\s*(\d+|\$|/[^/]*/))?\s*!?\s*[ewW]")
SED_SUBST_FLAGS = re.compile(r"s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1([gpiImMe0-9w]*)")


def sed(argv: list[str], recurse: Recurse) -> Verdict:
    scripts: list[str] = []
    args = argv[1:]
    positional: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-i", "-I") or a.startswith("--in-place") or (a.startswith("-") and not a.startswith("--") and "i" in a[1:]
                                                              and a[1:2] != "e"):
            return confirm(argv, "sed -i edits files in place")
        if a in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--expression="):
            scripts.append(a.split("=", 1)[1])
        elif a in ("-f", "--file") or a.startswith("--file="):
            return confirm(argv, "sed runs a script file")
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    if not scripts and positional:
        scripts.append(positional.pop(0))
    for script in scripts:
        if SED_EXEC.search(script):
            return confirm(argv, "sed script uses e / w / W (runs commands or writes files)")
        for m in SED_SUBST_FLAGS.finditer(script):
            if "e" in m.group(2) or "w" in m.group(2):
                return confirm(argv, "sed s///e or s///w runs commands or writes files")
    return read_only_args(["sed", *positional])


def awk(argv: list[str], recurse: Recurse) -> Verdict:
    args = argv[1:]
    if any(a in ("-f", "--file") or a.startswith("--file=") or a in ("-i", "--include") for a in args):
        return confirm(argv, "awk runs a script file")
    prog = next((a for a in args if not a.startswith("-")), "")
    if re.search(r"system\s*\(|\|\s*\"|\|\s*getline|print[^;]*>|printf[^;]*>|\|&", prog):
        return confirm(argv, "awk program runs commands or writes files")
    return safe(argv, "awk program only reads and prints")
