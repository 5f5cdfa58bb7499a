"""What git's revision and pathspec operands name, judged as the reads they are.

git prints files from its object store as well as from the working tree: `git show HEAD:.env` prints `.env` as
committed, so `REV:PATH` (and the index's `:PATH`, `:N:PATH`) is judged as a read of PATH. A pathspec is a
pattern git matches itself (gitglossary(7), "pathspec"): wildcards match `/` and a leading dot, magic in
`:(glob)`, `:(icase)`, `:(exclude)`, `:!`, `:/`; it is judged by every name it can match, so `'.e[n]v'` and
`':(icase).ENV'` ask like `.env`. A search of the whole history's contents that prints patches (`log -p -S`)
and an object named only by its id (`cat-file -p 3f2a…`) may print any file ever committed, and ask.
"""

from __future__ import annotations

import re
from typing import Callable

from framework_core.policy.context import Ctx, Word
from framework_core.policy.paths import glob_match, show

Read = Callable[[Word, str, bool, Ctx], "tuple[str, str]"]
MAGIC = re.compile(r"^:\(([^)]*)\)(.*)$", re.S)
SHORT_MAGIC = re.compile(r"^:([!^/]+)(.*)$", re.S)
STAGE = re.compile(r"^:([0-3]):(.*)$", re.S)
OBJECT_ID = re.compile(r"[0-9a-fA-F]{4,64}")
#: Options that print patches, and the pickaxe options that search the history's contents.
PATCHES = frozenset("-p -u --patch --patch-with-raw --patch-with-stat -U --unified -W --function-context --word-diff "
                    "--color-words --cc --dd -c".split())
PICKAXE = frozenset({"-S", "-G"})


def operand_problem(w: Word, ctx: Ctx, read: Read) -> tuple[str, str]:
    """(why this revision or pathspec operand is not a harmless read, the secret it may carry)."""
    if w.dynamic:
        return f"names a revision or path known only at run time ({w.text})", ""
    for path, pattern, icase in _named(w.text):
        for form in _forms(path, pattern, icase):
            wild = pattern and any(c in form for c in "*?[")
            why, secret = read(Word(form, quoted=True, glob=wild), form, False, ctx)
            if why:
                return f"git {why}", secret
    return "", ""


def history_problem(seen: set[str], program: str, operands: list[str], args: list[str]) -> str:
    """A search of the history's contents that prints the patches it finds, or an object by its bare id."""
    patches = seen & PATCHES or any(patch_cluster(a) for a in args) or (
        program == "show" and not seen & {"-s", "--no-patch"})  # git show prints patches unless told not to
    if seen & PICKAXE and patches:
        return "searches every commit's contents (-S/-G) and prints the patches: any secret ever committed"
    if program == "cat-file" and ("-p" in seen or "blob" in operands[:1]):
        bare = next((o for o in operands if OBJECT_ID.fullmatch(o)), None)
        if bare:
            return f"prints the object {bare}, named only by its id: it may be any file ever committed"
    return ""


def patch_cluster(arg: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and "p" in arg[1:] and arg[1:2] not in ("S", "G")


def _named(text: str) -> list[tuple[str, bool, bool]]:
    """(path, is a pattern, case-insensitive) for what the operand can name."""
    m = MAGIC.match(text)
    if m:
        words = {x.strip().split(":", 1)[0] for x in m.group(1).split(",")}
        literal = "literal" in words
        return [(m.group(2), not literal, "icase" in words)]
    m = STAGE.match(text)
    if m:
        return [(m.group(2), False, False)]
    m = SHORT_MAGIC.match(text)
    if m:
        return [(m.group(2), True, False)]
    if text.startswith(":"):
        return [(text[1:], False, False)]
    if ":" in text:  # REV:PATH names PATH in that revision (a pathspec by that name would be the same file)
        rev, _, path = text.partition(":")
        return [(path, False, False), (text, True, False)] if path else [(rev, True, False)]
    return [(text, True, False)]


def _forms(path: str, pattern: bool, icase: bool) -> list[str]:
    """The spellings a path is judged in: as given; lower case for icase; for a pattern, each component that
    starts with a wildcard also with a leading dot (git's `*` matches `.env`, bash's does not)."""
    path = path.lstrip("/")
    forms = [path.lower() if icase else path]
    if pattern and any(c in path for c in "*?["):
        parts = forms[0].split("/")
        dotted = "/".join("." + p if p[:1] in ("*", "?", "[") else p for p in parts)
        forms += [dotted, "*/" + forms[0].lstrip("*/")]
    return [f for f in forms if f]


#: git's configuration files: remote URLs, http.extraHeader and include.path can put a token in them.
CONFIG_FILE = re.compile(r"(?:^|/)\.git/(?:(?:modules|worktrees)/.+/)?config(?:\.worktree)?|(?:^|/)\.gitconfig|"
                         r"(?:^|/)\.config/git/config|/etc/gitconfig")
CONFIG_SAMPLES = (".git/config", ".git/config.worktree", "/home/§/.gitconfig", "/home/§/.config/git/config")


def config_file_reason(path: str, glob: bool) -> str | None:
    """Reading a git configuration file (`cat .git/config`) prints what `git config -l` would: it asks."""
    if CONFIG_FILE.fullmatch(path) or (glob and any(glob_match(c, path) for c in CONFIG_SAMPLES)):
        return f"git configuration {show(path)} (remote URLs and http.extraHeader can hold tokens)"
    return None
