"""Judges of programs by what their targets mean: deleting, writing, changing modes and owners, scheduling.
Which program each judges is said by its catalog entry (`catalog/changes.py`, `judge=`).

Targets are resolved first (`targets.resolve`), so `rm -rf ${HOME:?}`, `cd / && rm -rf *`, `rm -rf /tmp/../*`
and `rm -rf ~/.*` are judged like `rm -rf ~` and `rm -rf /*`. Pure functions over normalised argv.
"""

from __future__ import annotations

import re
import shlex
from typing import Callable

from framework_core.policy.catalog.entry import Program
from framework_core.policy.context import Ctx, Word, confirm, danger
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.network import word_secret
from framework_core.policy.paths import deletion_reason, device_reason, is_home, show, write_reason
from framework_core.policy.targets import Target, resolve

Handler = Callable[[list[str], list[Word], Ctx], Verdict]


def operands(argv: list[str]) -> list[int]:
    """Indexes of non-option words (after `--`, everything)."""
    out, dashdash = [], False
    for i, a in enumerate(argv[1:], start=1):
        if dashdash or not a.startswith("-") or a == "-":
            out.append(i)
        elif a == "--":
            dashdash = True
    return out


def _flags(argv: list[str]) -> str:
    letters = ""
    for a in argv[1:]:
        if a == "--":
            break
        if a.startswith("-") and not a.startswith("--"):
            letters += a[1:]
    return letters


def targets(words: list[Word], idx: list[int], ctx: Ctx) -> list[Target]:
    return [t for i in idx for t in resolve(words[i], ctx)]


def _deleted(t: Target) -> str | None:
    why = deletion_reason(t.path, t.glob) if t.path else None
    if why and t.unknown and t.unknown != "the working directory":
        return f"{why} if {t.unknown} is empty"
    return None if t.unknown == "the working directory" else why


def long_opt(argv: list[str], full: str, shortest: int) -> bool:
    """Is `full` among the options, spelled whole or abbreviated (GNU accepts any unique prefix)?"""
    return any(len(a.split("=")[0]) >= shortest and full.startswith(a.split("=")[0]) for a in argv[1:]
               if a.startswith("--"))


def rm(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    recursive = bool(set(_flags(argv)) & {"r", "R"}) or long_opt(argv, "--recursive", 3)
    if long_opt(argv, "--no-preserve-root", 3):
        return danger(argv, "deletes with --no-preserve-root")
    ts = targets(words, operands(argv), ctx)
    for t in ts:
        what = _deleted(t) if recursive else None
        if what:
            return danger(argv, f"recursive delete of {what}")
        bad, why = write_reason(t.path, t.glob) if t.path and not t.unknown else (False, "")
        if bad and ("system directory" in why or "device" in why):
            return danger(argv, f"deletes in a system location ({show(t.path)})")
    unknown = next((t for t in ts if t.unknown), None)
    if unknown is not None:
        return confirm(argv, f"deletes {unknown.raw}, which depends on {unknown.unknown}")
    outside = [t for t in ts if t.path.startswith("/") or t.path.startswith("..")]
    return confirm(argv, f"deletes {show(outside[0].path)}, outside the working directory" if outside else
                   "deletes files")


def writes(argv: list[str], words: list[Word], ctx: Ctx, dests: list[int], what: str) -> Verdict:
    """Judge the files a command writes: devices, persistence files and system trees are Dangerous."""
    notes: list[str] = []
    for i in dests:
        for t in resolve(words[i], ctx):
            if t.unknown:
                notes.append(f"writes {t.raw}, which depends on {t.unknown}")
                continue
            bad, why = write_reason(t.path, t.glob)
            if bad:
                return danger(argv, why)
            notes.append(why)
    outside = next((n for n in notes if "outside" in n or "LACA" in n or "depends" in n), "")
    return confirm(argv, outside or f"{argv[0]} {what}")


def copy_like(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    """cp, mv, ln, install, rsync (local): the destination, and each source written into it."""
    ops = operands(argv)
    target_dir = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-t", "--target-directory")), None)
    target_dir = target_dir or next((a.split("=", 1)[1] for a in argv if a.startswith("--target-directory=")), None)
    if argv[0] == "install" and re.search(r"(^|\s|=)[0-7]?[2467][0-7]{3}\b", " ".join(argv)) and (
            "-m" in argv or any(a.startswith("--mode") for a in argv)):
        return danger(argv, "installs a setuid/setgid program")
    if argv[0] == "mv" or (argv[0] == "rsync" and any(a.startswith("--remove-source") for a in argv)):
        for t in targets(words, ops[:-1] if not target_dir else ops, ctx):
            what = _deleted(t)
            if what:
                return danger(argv, f"moves away {what}")
    if argv[0] == "rsync" and any(a.startswith("--del") for a in argv) and ops:
        for t in resolve(words[ops[-1]], ctx):
            what = _deleted(t)
            if what:
                return danger(argv, f"rsync --delete into {what} deletes what is there")
    if target_dir is not None:
        dest_word = Word(target_dir, tilde=target_dir.startswith("~"))
        sources = ops
    elif len(ops) >= 2:
        dest_word, sources = words[ops[-1]], ops[:-1]
    else:
        return confirm(argv, f"{argv[0]} changes files")
    extra = [Word(dest_word.text.rstrip("/") + "/" + words[s].text.rstrip("/").rsplit("/", 1)[-1],
                  dest_word.dynamic or words[s].dynamic, tilde=dest_word.tilde) for s in sources]
    all_words = [*words, dest_word, *extra]
    secret = next((s for i in sources if (s := word_secret(words[i], ctx, True))), "")
    if secret:  # the copy now holds the secret too
        for t in [t for w in (dest_word, *extra) for t in resolve(w, ctx)]:
            ctx.tainted[t.path] = secret
    return writes(argv, all_words, ctx, list(range(len(words), len(all_words))), "changes files")


def dd(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    idx = [i for i, a in enumerate(argv) if a.startswith("of=")]
    if not idx:
        return confirm(argv, "dd copies data")
    w = words[idx[0]]
    return writes(argv, [Word(w.text[3:], w.dynamic, tilde=w.text.startswith("of=~"))], ctx, [0], "writes a file")


def shred(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    for t in targets(words, operands(argv), ctx):
        if device_reason(t.path):
            return danger(argv, f"shreds {device_reason(t.path)}")
    return confirm(argv, "shred destroys file contents")


SETUID_NUM = re.compile(r"^0*[2467][0-7]{3}$")
SETUID_SYM = re.compile(r"^[ugoa]*[+=][rwxXt]*s")


def chmod(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    ops = operands(argv)
    modes = [argv[i] for i in ops[:1]] + [a for a in argv[1:] if re.fullmatch(r"-[rwxXst]+", a)]
    if any(SETUID_NUM.match(m) or any(SETUID_SYM.match(p) for p in m.split(",")) for m in modes):
        return danger(argv, "sets the setuid/setgid bit (privilege escalation)")
    recursive = "R" in _flags(argv) or long_opt(argv, "--recursive", 5)
    for t in targets(words, ops[1:], ctx):
        what = _deleted(t)
        if recursive and what:
            return danger(argv, f"recursively changes the permissions of {what}")
    return writes(argv, words, ctx, ops[1:], "changes file permissions")


def chown(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    ops = operands(argv)
    owner = argv[ops[0]] if ops else ""
    if argv[0] == "chown" and owner.split(":")[0].split(".")[0] in ("root", "0"):
        return danger(argv, "gives files to root (privilege escalation)")
    if "R" in _flags(argv) or long_opt(argv, "--recursive", 5):
        for t in targets(words, ops[1:], ctx):
            what = _deleted(t)
            if what:
                return danger(argv, f"recursively changes the owner of {what}")
    return writes(argv, words, ctx, ops[1:], "changes file ownership")


def crontab(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    args = argv[1:]
    if "-r" in args:
        return confirm(argv, "removes the crontab")
    return danger(argv, "installs a cron job (persistence)")


def systemctl(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    verbs = [a for a in argv[1:] if not a.startswith("-")]
    verb = verbs[0] if verbs else ""
    if verb in ("enable", "link", "preset", "preset-all", "reenable", "add-wants", "add-requires", "edit",
                "set-environment", "import-environment", "daemon-reexec", "set-property", "revert", "mask"):
        return danger(argv, f"systemctl {verb} makes something run later or changes the service manager "
                            "(persistence)")
    if verb in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "soft-reboot"):
        return danger(argv, "shuts down or reboots the machine")
    return confirm(argv, f"systemctl {verb} changes services".replace("  ", " "))


def scheduler(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    if argv[0] in ("atq", "atrm"):
        return confirm(argv, "manages scheduled jobs")
    if argv[0] == "systemd-run" and not any(a.startswith(("--on-", "--timer-property")) for a in argv):
        return confirm(argv, "runs a command as a transient service")
    if argv[0] == "launchctl" and not any(a in ("load", "bootstrap", "enable", "submit", "setenv") for a in argv):
        return confirm(argv, "talks to launchd")
    return danger(argv, f"{argv[0]} schedules a command to run later (persistence)")


def kill(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    if "-1" in [argv[i] for i in operands(argv)] or (argv[-1] == "-1" and len(argv) > 2):
        return danger(argv, "kills every process the user can signal")
    return confirm(argv, "sends a signal to processes")


CONTAINER_RISK = re.compile(r"^--(privileged|pid=host|ipc=host|userns=host|cgroupns=host|uts=host)$|"
                            r"^--cap-add=?(all|sys_admin|sys_ptrace|sys_module|dac_read_search|sys_rawio)$|"
                            r"^--security-opt=?.*(unconfined|label[:=]disable|no-new-privileges[:=]false)", re.I)


def container(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    """docker/podman run, create, exec: escapes to the host are Dangerous."""
    for i, a in enumerate(argv[1:], start=1):
        joined = a if "=" in a or i + 1 >= len(argv) else f"{a}={argv[i + 1]}"
        if CONTAINER_RISK.match(a) or CONTAINER_RISK.match(joined):
            return danger(argv, f"{a} gives the container control of the host", network=True)
        if a in ("-v", "--volume", "--mount", "--device") or a.startswith(("--volume=", "--mount=", "--device=",
                                                                           "-v")):
            spec = a.split("=", 1)[1] if "=" in a and a.startswith("--") else a[2:] if a.startswith("-v") and \
                len(a) > 2 else argv[i + 1] if i + 1 < len(argv) else ""
            why = _mount_problem(spec, ctx)
            if why:
                return danger(argv, why, network=True)
    sub = next((a for a in argv[1:] if not a.startswith("-")), "")
    return confirm(argv, f"{argv[0]} {sub} runs a container".replace("  ", " "), network=sub in (
        "run", "create", "pull", "build", "push", "login", "search", "compose"))


def _mount_problem(spec: str, ctx: Ctx) -> str:
    fields = dict(f.split("=", 1) for f in spec.split(",") if "=" in f)
    source = fields.get("source") or fields.get("src") or spec.split(":", 1)[0]
    if "docker.sock" in source or "containerd.sock" in source or "podman.sock" in source:
        return "mounts the container daemon's socket, which controls the host as root"
    if not source.startswith(("/", "~", "$", ".")):
        return ""
    for t in resolve(Word(source, tilde=source.startswith("~"), dynamic="$" in source), ctx):
        p = t.path.rstrip("/") or "/"
        if deletion_reason(p) or is_home(p) or device_reason(p) or p.startswith(("/proc", "/sys", "/dev", "/etc",
                                                                                  "/run", "/var/run")):
            return f"mounts the host's {show(p)} into the container"
    return ""


def find(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    from framework_core.policy.find import find as _find

    return _find(argv, words, ctx)


def plain_writer(what: str) -> Handler:
    def handler(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
        ops = operands(argv)
        if argv[0] == "truncate":
            ops = [i for i in ops if argv[i - 1] not in ("-s", "--size", "-r", "--reference")]
        return writes(argv, words, ctx, ops, what)
    return handler


def tee(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    ops = operands(argv)
    if all(argv[i] in ("/dev/null", "/dev/stderr", "/dev/stdout") for i in ops):
        return Verdict(Level.SAFE, (f'"{shlex.join(argv)}": copies its input only to the screen',))
    return writes(argv, words, ctx, ops, "writes files")


#: The judges catalog entries name (`judge="rm"` in `catalog/changes.py`).
JUDGES: dict[str, Handler] = {
    "rm": rm, "rmdir": plain_writer("removes directories"), "unlink": plain_writer("deletes a file"),
    "copy": copy_like, "touch": plain_writer("changes files"), "mkdir": plain_writer("creates directories"),
    "truncate": plain_writer("truncates files"), "mkfifo": plain_writer("creates a pipe"), "tee": tee, "dd": dd,
    "shred": shred, "chmod": chmod, "chown": chown, "crontab": crontab, "systemctl": systemctl,
    "scheduler": scheduler, "kill": kill, "find": find, "container": container,
}


def fixed(argv: list[str], entry: Program | None) -> Verdict | None:
    """Programs whose name alone decides (their catalog entry's `fixed`); `mkfs.*` and `init 0` by shape."""
    name = argv[0]
    if entry is not None and entry.fixed is not None:
        decide = danger if entry.fixed.level == "dangerous" else confirm
        return decide(argv, entry.fixed.why.format(name=name))
    if name.startswith("mkfs."):
        return danger(argv, "formats, repartitions or maps a disk")
    if name in ("init", "telinit") and argv[1:2] in (["0"], ["6"]):
        return danger(argv, "shuts down or reboots the machine")
    return None
