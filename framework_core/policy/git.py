"""git's judge, for what its catalog entry (`catalog/git.py`) cannot say: configuration keys that run
commands, commands it runs for you (`-c core.pager=…`, `rebase --exec`, `submodule foreach`,
`--upload-pack`), persistence through hooks and config, another repository's configuration, and the folder
a clone fills with downloaded code. `git()` returns None when nothing here applies (the specification or the
network rule decides).
"""

from __future__ import annotations

import re

from framework_core.policy.context import Ctx, Word, confirm, danger
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.targets import resolve

EXEC_KEYS = re.compile(
    r"core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand|worktree)|"
    r"sequence\.editor|diff\..*\.(textconv|command)|diff\.external|difftool\..*\.cmd|mergetool\..*\.cmd|"
    r"merge\..*\.driver|filter\..*\.(clean|smudge|process)|alias\..*|credential\..*helper|credential\.helper|"
    r"gpg\.(.*\.)?program|pager\..*|man\..*\.(cmd|path)|web\.browser|browser\..*\.(cmd|path)|"
    r"uploadpack\.packobjectshook|remote\..*\.(uploadpack|receivepack|proxy)|include\.path|includeif\..*|"
    r"init\.templatedir|interactive\.difffilter|sendemail\..*|submodule\..*\.update|protocol\..*allow|"
    r"http\..*proxy|ssh\.variant|core\.sshcommand|fetch\..*|receive\..*hook.*|status\..*", re.I)
GLOBAL_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--list-cmds"}
RUNS_VALUE = {"--upload-pack", "-u", "--receive-pack", "--exec", "-x"}


def _config_value(argv: list[str], key_value: str, ctx: Ctx, persistent: bool) -> Verdict | None:
    key, _, value = key_value.partition("=")
    if not EXEC_KEYS.fullmatch(key):
        return None
    if key.lower().startswith("alias.") and not value.startswith("!"):
        return confirm(argv, f"defines the git alias {key[6:]}")
    if persistent:
        return danger(argv, f"sets {key}, which makes later git commands run a program (persistence)")
    code = value[1:] if value.startswith("!") else value
    inner, _ = ctx.nested(code) if code else (Verdict(Level.NEEDS_CONFIRM, ()), None)
    if inner.level == Level.DANGEROUS:
        return inner
    return confirm(argv, f"git -c {key} runs {code or 'a configured program'}")


def git(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict | None:
    i = 1
    found: list[Verdict] = []
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a == "-c" and i + 1 < len(argv):
            v = _config_value(argv, argv[i + 1], ctx, persistent=False)
            found += [v] if v else []
        elif a.startswith("--config-env"):
            found.append(confirm(argv, "git --config-env takes configuration from the environment"))
        i += 2 if a in GLOBAL_VALUE else 1
    if i >= len(argv):
        return Verdict.combine(found) if found else None
    sub, rest = argv[i], argv[i + 1:]
    found += _subcommand(argv, sub, rest, ctx)
    return Verdict.combine(found) if found else None


def _subcommand(argv: list[str], sub: str, rest: list[str], ctx: Ctx) -> list[Verdict]:
    out: list[Verdict] = []
    if sub == "config":
        writes = [r for r in rest if not r.startswith("-")]
        reading = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch"} & set(rest) or \
            writes[:1] in (["get"], ["list"])
        if not reading and (len(writes) >= 2 or writes[:1] in (["set"], ["--add"])):
            key = writes[1] if writes[0] in ("set",) and len(writes) > 1 else writes[0]
            value = writes[-1] if len(writes) > 1 else ""
            v = _config_value(argv, f"{key}={value}", ctx, persistent=True)
            out += [v] if v else []
    for j, r in enumerate(rest):
        opt, eq, value = r.partition("=")
        if opt in RUNS_VALUE and (sub in ("fetch", "clone", "ls-remote", "push", "pull", "archive") or opt in (
                "--exec", "-x") and sub == "rebase"):
            code = value if eq else rest[j + 1] if j + 1 < len(rest) else ""
            inner, _ = ctx.nested(code)
            out.append(inner if inner.level == Level.DANGEROUS else confirm(argv, f"git {sub} {opt} runs {code}"))
        if sub == "clone" and opt in ("-c", "--config") and (eq or j + 1 < len(rest)):
            v = _config_value(argv, value if eq else rest[j + 1], ctx, persistent=True)
            out += [v] if v else []
        if opt == "--template":
            out.append(confirm(argv, f"git {sub} --template copies hooks that run later"))
    if sub == "submodule" and "foreach" in rest:
        code = " ".join(rest[rest.index("foreach") + 1:])
        out.append(Verdict.combine([ctx.nested(code)[0], confirm(argv, "git submodule foreach runs a command")]))
    if sub == "bisect" and rest[:1] == ["run"]:
        code = " ".join(rest[1:])
        out.append(Verdict.combine([ctx.nested(code)[0], confirm(argv, "git bisect run runs a command")]))
    return out


def other_repository(argv: list[str], ctx: Ctx) -> str:
    """Why this git command may work on a repository other than the workspace's own ("" when it cannot):
    `-C DIR`, a working directory changed by `cd`, `--no-index` (no repository: any files). Another repository's
    configuration (textconv, fsmonitor, pager …) runs commands, so git there is never known harmless."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if a == "-C" and value not in (".", "./"):
            return f"runs git in {value}, which may be another repository (its configuration can run commands)"
        if a.startswith("-C") and len(a) > 2 and a[2:] not in (".", "./"):
            return f"runs git in {a[2:]}, which may be another repository (its configuration can run commands)"
        i += 2 if a in GLOBAL_VALUE else 1
    if ctx.cwd is None or ctx.cwd not in ("", "."):
        where = "a directory known only at run time" if ctx.cwd is None else ctx.cwd
        return f"runs git in {where}, which may be another repository (its configuration can run commands)"
    if "--no-index" in argv[i + 1:]:
        return "git --no-index works outside any repository, on whatever paths it is given"
    if argv[i:i + 2] == ["config", "edit"] or (argv[i:i + 1] == ["config"] and argv[i + 1:i + 2] in (
            ["set"], ["unset"], ["rename-section"], ["remove-section"])):
        return f"git config {argv[i + 1]} changes configuration"
    return ""


CLONE_VALUE_OPTS = {"-b", "--branch", "-o", "--origin", "-c", "--config", "--depth", "--reference", "--template",
                    "-j", "--jobs", "--filter", "-u", "--upload-pack", "--separate-git-dir", "--shallow-since",
                    "--shallow-exclude", "--server-option", "--bundle-uri"}


def remember_clone(texts: list[str], ctx: Ctx) -> None:
    """`git clone URL [DIR]`: DIR (or the URL's last part) holds downloaded code from now on."""
    args = texts[texts.index("clone") + 1:]
    ops, i = [], 0
    while i < len(args):
        a = args[i]
        if a in CLONE_VALUE_OPTS:
            i += 2
            continue
        if not a.startswith("-"):
            ops.append(a)
        i += 1
    if not ops:
        return
    target = ops[1] if len(ops) > 1 else ops[0].rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    for t in resolve(Word(target, tilde=target.startswith("~")), ctx):
        if t.path and not t.unknown:
            ctx.downloaded.add(t.path)
