"""Per-program knowledge: which invocations are read-only (Safe), which are catastrophic (Dangerous).

Everything not known to be read-only needs confirmation. Pure functions over a normalised argv.
"""

from __future__ import annotations

import re
import shlex
from typing import Callable

from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import catastrophic_target, credential_reason, is_block_device, is_persistence_path
from framework_core.policy.programs_base import Recurse, confirm, danger, read_only_args, safe
from framework_core.policy.script_programs import awk, git, sed


ALWAYS_SAFE = {
    "ls", "cat", "head", "wc", "pwd", "echo", "printf", "grep", "egrep", "fgrep", "tree", "stat", "file", "du",
    "df", "which", "whereis", "type", "uname", "whoami", "id", "groups", "uptime", "ps", "free", "lsblk", "lscpu",
    "diff", "cmp", "comm", "md5sum", "sha1sum", "sha256sum", "sha512sum", "sha224sum", "sha384sum", "b2sum",
    "cksum", "basename", "dirname", "realpath", "readlink", "true", "false", "test", "[", "[[", "cut", "tr", "uniq",
    "nl", "fold", "fmt", "column", "paste", "join", "rev", "tac", "od", "hexdump", "strings", "seq", "sleep",
    "expr", "nproc", "arch", "locale", "getconf", "cd", "pushd", "popd", "dirs", "alias", "unalias", "jq", "wc",
    "ag", "ack", "tail", "zcat", "bzcat", "xzcat", "zgrep", "look", "lsof", "ss", "netstat", "tty", "hostid",
    "logname", "users", "who", "w", "last", "pgrep", "pidof", "cal", "factor", "numfmt", "shasum", "base32",
    "base64", "iconv", "unexpand", "expand", "split_dummy", "printf", "exit", "return", "shift", "set_dummy",
    "read", "wait", "jobs", "hash", "help", "history", "umask", "ulimit", "true", "getent", "dig", "host",
    "nslookup", "hostname", "du", "envsubst", "comm", "tsort", "mdfind", "sw_vers", "vm_stat", "sysctl_dummy",
}
VERSION_FLAGS = {"--version", "-V", "--help", "-h", "version", "-version", "help"}
TOOLCHAINS = {"python", "python3", "node", "npm", "npx", "pip", "pip3", "cargo", "rustc", "rustup", "go", "java",
              "javac", "gcc", "g++", "cc", "clang", "make", "cmake", "docker", "kubectl", "ruby", "perl", "deno",
              "bun", "yarn", "pnpm", "uv", "poetry", "tsc", "terraform", "helm", "gh", "php", "dotnet", "mvn",
              "gradle", "swift", "ghc", "cabal", "stack", "zig", "lua", "R", "bash", "sh", "zsh", "git", "pytest",
              "ruff", "mypy", "black", "eslint", "prettier", "conda", "brew", "apt", "apt-get", "tmux", "vim", "nvim"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh", "busybox"}
INTERPRETERS = SHELLS | {"python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "Rscript",
                         "deno", "bun", "tclsh", "awk", "gawk", "mawk", "osascript", "pwsh", "powershell", "source", "."}
NETWORK = {"curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "ftp", "telnet", "rsync", "http",
           "https", "xh", "aria2c", "fetch", "openssl"}
PRIVILEGE = {"sudo", "su", "doas", "pkexec", "runas", "sudoedit"}
DISK_WIPERS = {"mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk",
               "blkdiscard", "mkdosfs", "mkntfs", "cryptsetup", "zpool", "diskutil"}
POWER = {"shutdown", "reboot", "halt", "poweroff"}
SECRET_VAR = re.compile(r"\$\{?[A-Za-z_]*(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|ACCESS_KEY)[A-Za-z_]*\}?", re.I)
WRAPPER_VALUE_OPTS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "-p"}, "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"}, "taskset": set(), "chrt": set(), "xargs": {"-I", "-n", "-P", "-d", "-E", "-L", "-s",
    "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace"},
}
WRAPPERS = {"env", "nice", "timeout", "nohup", "command", "builtin", "exec", "xargs", "time", "stdbuf", "ionice",
            "setsid", "chrt", "taskset", "unbuffer", "watch", "caffeinate", "nocorrect", "noglob", "flock", "chroot"}


def unwrap(argv: list[str]) -> tuple[list[str], list[str]]:
    """Strip wrapper programs (env, nice, timeout, xargs, …). Returns (inner argv, wrappers seen)."""
    seen: list[str] = []
    while argv:
        name = argv[0].rsplit("/", 1)[-1]
        if name not in WRAPPERS:
            break
        if name == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
            break
        seen.append(name)
        rest = argv[1:]
        value_opts = WRAPPER_VALUE_OPTS.get(name, set())
        while rest and (rest[0].startswith("-") or (name == "env" and "=" in rest[0] and not rest[0].startswith("="))):
            opt = rest.pop(0)
            if opt == "--":
                break
            if opt in value_opts and rest:
                rest.pop(0)
        if name == "timeout" and rest:
            rest = rest[1:]  # the duration
        if name in ("nice", "chrt", "taskset") and rest and rest[0].lstrip("-").isdigit():
            rest = rest[1:]
        if name == "flock" and rest:
            rest = rest[1:]
        if name == "chroot" and rest:
            rest = rest[1:]
        if name == "xargs" and not rest:
            rest = ["echo"]
        argv = rest
    return argv, seen


def classify_program(argv: list[str], recurse: Recurse) -> Verdict:
    """Classify one simple command's argv (already normalised and unwrapped)."""
    name = argv[0].rsplit("/", 1)[-1] if argv[0] != "/" else "/"
    args = argv[1:]
    if name in PRIVILEGE:
        return danger(argv, "privilege escalation")
    if name in DISK_WIPERS or name.startswith("mkfs."):
        return danger(argv, "formats or repartitions a disk")
    if name in POWER or (name in ("init", "telinit") and args[:1] in (["0"], ["6"])):
        return danger(argv, "shuts down or reboots the machine")
    if name in ("node", "npm", "yarn", "pnpm", "bun", "deno", "npx") and args == ["-v"]:
        return safe(argv, "only prints the version")
    handler = HANDLERS.get(name)
    if handler is not None:
        return handler(argv, recurse)
    if name in SHELLS or name in INTERPRETERS:
        return interpreter(argv, recurse)
    if name in NETWORK:
        return network(argv, recurse)
    if args and len(args) == 1 and args[0] in VERSION_FLAGS and name in TOOLCHAINS | ALWAYS_SAFE:
        return safe(argv, "only prints version or help")
    if name in ALWAYS_SAFE:
        return read_only_args(argv)
    if "/" in argv[0]:
        return confirm(argv, "runs a program by path; LACA cannot know what it does")
    return confirm(argv, f"'{name}' is not known to be read-only")


# ---- handlers ---------------------------------------------------------------------------------------

def interpreter(argv: list[str], recurse: Recurse) -> Verdict:
    name = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if len(args) == 1 and args[0] in VERSION_FLAGS:
        return safe(argv, "only prints version or help")
    if name in SHELLS:
        for i, arg in enumerate(args):
            if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
                if i + 1 < len(args):
                    inner = recurse(args[i + 1])
                    return Verdict.combine([inner, confirm(argv, "runs a shell")]) if inner.level < Level.NEEDS_CONFIRM \
                        else inner
                break
    if name in ("awk", "gawk", "mawk"):
        return awk(argv, recurse)
    if name in ("source", "."):
        return confirm(argv, "runs a script in the shell")
    if not args:
        return confirm(argv, f"{name} runs code read from its input")
    return confirm(argv, f"{name} runs a script or inline code")


def network(argv: list[str], recurse: Recurse) -> Verdict:
    for arg in argv[1:]:
        data = arg.split("=", 1)[-1] if arg.startswith("-") and "=" in arg else arg
        if "@" in data:
            target = data.split("@", 1)[1]
            if target and credential_reason(target):
                return danger(argv, f"sends a credential file ({target}) over the network")
        if credential_reason(arg) and any(a in ("-T", "--upload-file", "-F", "--form", "-d", "--data",
                                                "--data-binary", "--post-file", "--body-file") for a in argv):
            return danger(argv, f"uploads a credential file ({arg})")
        if SECRET_VAR.search(arg):
            return danger(argv, "sends a secret environment variable over the network")
    return confirm(argv, "uses the network")


def rm(argv: list[str], recurse: Recurse) -> Verdict:
    flags = [a for a in argv[1:] if a.startswith("-") and a != "--"]
    recursive = any(f in ("--recursive", "-r", "-R") or (not f.startswith("--") and ("r" in f or "R" in f))
                    for f in flags)
    if "--no-preserve-root" in flags:
        return danger(argv, "deletes with --no-preserve-root")
    targets = [a for a in argv[1:] if not a.startswith("-")]
    if recursive:
        for t in targets:
            what = catastrophic_target(t)
            if what:
                return danger(argv, f"recursive delete of {what}")
    return confirm(argv, "deletes files")


def find(argv: list[str], recurse: Recurse) -> Verdict:
    args = argv[1:]
    verdicts: list[Verdict] = []
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "\\;", "+")), len(args))
            inner = shlex.join([a for a in args[i + 1:end] if a != "{}"] or ["true"])
            verdicts += [recurse(inner), confirm(argv, f"find {arg} runs a command on each match")]
        elif arg == "-delete":
            start = [a for a in args[:i] if not a.startswith("-")]
            what = next((catastrophic_target(a) for a in start if catastrophic_target(a)), None)
            verdicts.append(danger(argv, f"recursive delete of {what}") if what else confirm(argv, "find -delete deletes files"))
        elif arg.startswith("-fprint") or arg == "-fls":
            verdicts.append(confirm(argv, f"find {arg} writes a file"))
    return Verdict.combine(verdicts) if verdicts else read_only_args(argv)


def sort(argv: list[str], recurse: Recurse) -> Verdict:
    if any(a in ("-o",) or a.startswith("--output") or a.startswith("-o") or a.startswith("--compress-program")
           for a in argv[1:]):
        return confirm(argv, "sort -o writes a file")
    return read_only_args(argv)


def pager(argv: list[str], recurse: Recurse) -> Verdict:
    name = argv[0]
    for a in argv[1:]:
        if a.startswith("+") or a.startswith("-k") or a.startswith("--lesskey") or (name == "man" and (
                a in ("-P", "-H", "-p", "--pager", "--html", "--preprocessor") or a.startswith(("--pager=", "--html")))):
            return confirm(argv, f"{name} option {a} can run commands")
    return read_only_args(argv)


def dd(argv: list[str], recurse: Recurse) -> Verdict:
    for a in argv[1:]:
        if a.startswith("of="):
            target = a[3:]
            if is_block_device(target):
                return danger(argv, f"dd writes the disk device {target}")
            return confirm(argv, f"dd writes {target}")
    return confirm(argv, "dd copies data")


def shred(argv: list[str], recurse: Recurse) -> Verdict:
    if any(is_block_device(a) for a in argv[1:]):
        return danger(argv, "shreds a disk device")
    return confirm(argv, "shred destroys file contents")


def chmod(argv: list[str], recurse: Recurse) -> Verdict:
    args = argv[1:]
    mode = next((a for a in args if not a.startswith("-") or re.fullmatch(r"-[rwxXst]+", a)), "")
    if re.search(r"[ugoa]*\+[rwxXt]*s", mode) or re.fullmatch(r"[2467]\d{3}", mode):
        return danger(argv, "sets the setuid/setgid bit (privilege escalation)")
    recursive = any(a in ("-R", "--recursive") for a in args)
    if recursive and any(catastrophic_target(a) for a in args if not a.startswith("-") and a != mode):
        return danger(argv, "recursively changes permissions of a system or home directory")
    return confirm(argv, "changes file permissions")


def chown(argv: list[str], recurse: Recurse) -> Verdict:
    owner = next((a for a in argv[1:] if not a.startswith("-")), "")
    if owner.split(":")[0] in ("root", "0"):
        return danger(argv, "gives files to root (privilege escalation)")
    recursive = any(a in ("-R", "--recursive") for a in argv[1:])
    if recursive and any(catastrophic_target(a) for a in argv[2:] if not a.startswith("-")):
        return danger(argv, "recursively changes ownership of a system or home directory")
    return confirm(argv, "changes file ownership")


def writer(argv: list[str], recurse: Recurse) -> Verdict:
    for a in argv[1:]:
        if is_persistence_path(a):
            return danger(argv, f"writes a shell start-up / scheduler file ({a}): persistence")
        if is_block_device(a):
            return danger(argv, f"writes the disk device {a}")
    return confirm(argv, f"{argv[0]} changes files")


def crontab(argv: list[str], recurse: Recurse) -> Verdict:
    if argv[1:] == ["-l"] or argv[1:2] == ["-l"]:
        return safe(argv, "crontab -l only lists")
    if "-r" in argv[1:]:
        return confirm(argv, "removes the crontab")
    return danger(argv, "installs a cron job (persistence)")


def systemctl(argv: list[str], recurse: Recurse) -> Verdict:
    verbs = [a for a in argv[1:] if not a.startswith("-")]
    verb = verbs[0] if verbs else "list-units"
    if verb in ("status", "list-units", "list-unit-files", "is-active", "is-enabled", "is-failed", "show", "cat",
                "list-timers", "list-sockets", "list-jobs"):
        return safe(argv, f"systemctl {verb} is read-only")
    if verb in ("enable", "link", "preset", "daemon-reexec"):
        return danger(argv, f"systemctl {verb} makes a service start automatically (persistence)")
    if verb in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate"):
        return danger(argv, "shuts down or reboots the machine")
    return confirm(argv, f"systemctl {verb} changes services")


def kill(argv: list[str], recurse: Recurse) -> Verdict:
    if "-1" in argv[2:] or (len(argv) > 1 and argv[-1] == "-1" and len(argv) > 2):
        return danger(argv, "kills every process the user can signal")
    return confirm(argv, "sends a signal to processes")


def env_like(argv: list[str], recurse: Recurse) -> Verdict:
    if len(argv) == 1:
        return confirm(argv, "prints every environment variable, which may include secrets")
    if argv[0] == "printenv" and all(not SECRET_VAR.search("$" + a) for a in argv[1:]):
        return safe(argv, "prints named, non-secret variables")
    return confirm(argv, "prints environment variables")


def tee(argv: list[str], recurse: Recurse) -> Verdict:
    files = [a for a in argv[1:] if not a.startswith("-")]
    if all(f == "/dev/null" for f in files):
        return safe(argv, "tee only to the screen")
    return writer(argv, recurse)


def xxd(argv: list[str], recurse: Recurse) -> Verdict:
    positional = [a for a in argv[1:] if not a.startswith("-")]
    if len(positional) >= 2:
        return confirm(argv, "xxd with an output file writes it")
    return read_only_args(argv)


def date(argv: list[str], recurse: Recurse) -> Verdict:
    if any(a in ("-s", "--set") or a.startswith("--set") for a in argv[1:]):
        return confirm(argv, "sets the system clock")
    return safe(argv)


def rg(argv: list[str], recurse: Recurse) -> Verdict:
    if any(a.startswith("--pre") for a in argv[1:]):
        return confirm(argv, "rg --pre runs a command on each file")
    return read_only_args(argv)


def package_query(argv: list[str], recurse: Recurse) -> Verdict:
    sub = next((a for a in argv[1:] if not a.startswith("-")), "")
    queries = {"pip": {"list", "show", "freeze", "check", "index", "help", "inspect"},
               "pip3": {"list", "show", "freeze", "check", "index", "help", "inspect"},
               "npm": {"ls", "list", "view", "outdated", "help", "config-get", "search", "explain", "why", "root",
                       "prefix", "bin"},
               "cargo": {"tree", "metadata", "search", "help", "locate-project", "version"},
               "go": {"version", "env", "list", "help", "doc"},
               "docker": {"ps", "images", "logs", "inspect", "version", "info", "help"},
               "kubectl": {"get", "describe", "logs", "version", "explain", "api-resources", "top"}}
    name = argv[0]
    if len(argv) == 2 and argv[1] in VERSION_FLAGS:
        return safe(argv, "only prints version or help")
    if sub in queries.get(name, set()):
        return safe(argv, f"{name} {sub} only reads")
    return confirm(argv, f"{name} {sub or ''} may install, build or change things".replace("  ", " "))


def ip(argv: list[str], recurse: Recurse) -> Verdict:
    words = [a for a in argv[1:] if not a.startswith("-")]
    if len(words) <= 1 or words[1] in ("show", "list", "ls", "get"):
        return safe(argv, "ip query is read-only")
    return confirm(argv, "ip changes network settings")


def shell_state(argv: list[str], recurse: Recurse) -> Verdict:
    if len(argv) == 1:
        return confirm(argv, "prints every shell variable, which may include secrets")
    return safe(argv, "only changes this command's own shell state")


def eval_(argv: list[str], recurse: Recurse) -> Verdict:
    inner = recurse(" ".join(argv[1:]))
    return Verdict.combine([inner, confirm(argv, "eval runs a constructed command")])


HANDLERS: dict[str, Callable[[list[str], Recurse], Verdict]] = {
    "rm": rm, "rmdir": lambda a, r: confirm(a, "removes directories"), "find": find, "git": git, "sed": sed,
    "sort": sort, "less": pager, "more": pager, "most": pager, "man": pager, "dd": dd, "shred": shred,
    "chmod": chmod, "chown": chown, "chgrp": chown, "cp": writer, "mv": writer, "ln": writer, "install": writer,
    "touch": writer, "mkdir": writer, "truncate": writer, "crontab": crontab, "systemctl": systemctl,
    "kill": kill, "env": env_like, "printenv": env_like, "tee": tee, "xxd": xxd, "date": date, "rg": rg,
    "pip": package_query, "pip3": package_query, "npm": package_query, "cargo": package_query, "go": package_query,
    "docker": package_query, "kubectl": package_query, "ip": ip, "set": shell_state, "export": shell_state,
    "declare": shell_state, "typeset": shell_state, "local": shell_state, "readonly": shell_state, "eval": eval_,
    "command": lambda a, r: safe(a, "only looks a command up") if a[1:2] in (["-v"], ["-V"]) else confirm(a, "runs a command"),
    "awk": awk, "gawk": awk, "mawk": awk, "unset": lambda a, r: safe(a, "only changes this command's own shell state"),
}
