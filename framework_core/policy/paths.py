"""Pure path knowledge: what is protected from deletion, from writing, and what holds secrets.

Every function takes a path already resolved by `targets.resolve` (absolute, with the user's home written
`/home/§`, or relative to the working directory) and may take a glob pattern: a pattern is judged by what
it could match, so `/tmp/../*`, `~/.*` and `/h?me` are judged like the paths they reach.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase, translate
from functools import lru_cache

HOME = "/home/§"  # the user's home while resolving; shown as "~"
SYSTEM_DIRS = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
               "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/mnt", "/media", "/snap", "/nix",
               "/usr/bin", "/usr/lib", "/usr/lib64", "/usr/local", "/usr/local/bin", "/usr/sbin", "/usr/share",
               "/usr/include", "/usr/libexec", "/var/lib", "/var/log", "/var/spool", "/var/tmp", "/System",
               "/Library", "/Applications", "/Users", "/private", "/cores", "/Volumes")
#: Writing anywhere below these changes the system (or fails for want of root, which is no reason to try).
SYSTEM_TREES = ("/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sbin", "/usr", "/var/lib",
                "/var/spool", "/var/log", "/sys", "/proc", "/snap", "/nix", "/System", "/Library", "/srv")
#: Deleting these (or everything in them) loses the user's keys and settings.
HOME_DIRS_KEPT = ("~/.ssh", "~/.gnupg", "~/.aws", "~/.config", "~/.local", "~/.kube", "~/.docker", "~/.password-store",
                  "~/Library", "~/Documents", "~/Desktop", "~/.azure", "~/.cargo", "~/.rustup")
CREDENTIALS = (
    ".env", ".env.*", "*.env", "*/.env", "*/.env.*", "~/.ssh", "~/.ssh/*", "*/.ssh/id_*", "~/.aws", "~/.aws/*",
    "~/.config/gcloud", "~/.config/gcloud/*", "~/.kube", "~/.kube/*", "~/.netrc", "*/.netrc", "~/.npmrc",
    "~/.pypirc", "~/.docker/config.json", "*.pem", "*.key", "*.p12", "*.pfx", "*id_rsa*", "*id_ed25519*",
    "*id_ecdsa*", "*id_dsa*", "~/.gnupg", "~/.gnupg/*", "~/.git-credentials", "*/.git-credentials",
    "~/.config/gh/hosts.yml", "~/.config/gh", "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d/*",
    "~/.password-store", "~/.password-store/*", "*credentials.json", "*/.aws/credentials", "~/.azure", "~/.azure/*",
    "/proc/*/environ", "/proc/*/task/*/environ", "/proc/*/mem", "/proc/*/cmdline", "~/.bash_history",
    "~/.zsh_history", "~/.history", "~/.python_history", "~/.node_repl_history", "~/.psql_history",
    "~/.mysql_history", "~/.local/share/fish/fish_history", "~/.config/laca", "~/.config/laca/*",
    "~/.local/share/laca", "~/.local/share/laca/*", "~/.local/share/keyrings", "~/.local/share/keyrings/*",
    "~/.pgpass", "~/.my.cnf", "~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.config/hub",
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials", "~/.m2/settings.xml",
    "~/.config/openai", "~/.config/openai/*", "~/.anthropic", "~/.anthropic/*", "~/Library/Keychains/*",
    "~/.mozilla", "~/.mozilla/*", "~/.thunderbird", "~/.thunderbird/*", "~/.config/google-chrome",
    "~/.config/google-chrome/*", "~/.config/chromium", "~/.config/chromium/*", "~/.config/BraveSoftware/*",
    "~/Library/Application Support/Google/Chrome/*", "~/Library/Application Support/Firefox/*", "~/.config/op/*",
    "~/.config/rclone/rclone.conf", "~/.s3cfg", "~/.boto", "~/.databrickscfg", "~/.config/hcloud/*",
    "~/.config/doctl/*", "~/.fly/*", "~/.config/netlify/*", "~/.vercel/*", "~/.terraformrc", "~/.npm/_authToken",
    # shell start-up files often export tokens; direnv files exist to hold them
    "~/.bashrc", "~/.bash_profile", "~/.profile", "~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.config/fish/config.fish",
    ".envrc", "*/.envrc",
    # credential shapes inside a workspace
    "*secrets.y*ml", "*secrets.json", "*secrets.toml", "*.secret", "*.secrets", "*credentials", "*credentials.json",
    "*credentials.y*ml", "*credentials.toml", "*credentials.ini", "*credentials.conf", "*credentials.xml",
    "*credentials.csv",
    "*.kdbx", "*.keystore", "*.jks", "*.ppk", "*.tfvars", "*.tfstate", "*.tfstate.backup", "*.htpasswd",
    "*service-account*.json", "*service_account*.json", ".npmrc", "*/.npmrc", ".pypirc", "*/.pypirc", ".pgpass",
    "*/.pgpass", ".my.cnf", "*/.my.cnf", "*.ovpn", "*.gpg", "*.keychain*", "*.age", ".vault-token",
)
#: Concrete samples a glob is tried against: `cat ~/.ss?/*` reaches a key even though no pattern says so.
CREDENTIAL_SAMPLES = ("~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.aws/credentials", "~/.netrc", "/proc/1/environ",
                      "/proc/self/environ", "~/.git-credentials", "~/.config/gh/hosts.yml", "/etc/shadow",
                      "~/.bash_history", "~/.docker/config.json", "~/.kube/config", "~/.gnupg/private-keys-v1.d",
                      "~/.config/laca/config.yaml", ".env")
PERSISTENCE = (
    "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.bash_aliases", "~/.bash_*", "~/.profile",
    "~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.zlogin", "~/.zlogout", "~/.zsh/*", "~/.oh-my-zsh/*", "~/.kshrc",
    "~/.mkshrc", "~/.cshrc", "~/.tcshrc", "~/.login", "~/.logout", "~/.config/fish", "~/.config/fish/*",
    "~/.inputrc", "~/.xprofile", "~/.xinitrc", "~/.xsession", "~/.xsessionrc", "~/.pam_environment",
    "~/.config/environment.d", "~/.config/environment.d/*", "~/.config/autostart", "~/.config/autostart/*",
    "~/.config/systemd/*", "~/.local/share/systemd/*", "~/.ssh/rc", "~/.ssh/config", "~/.ssh/environment",
    "~/.ssh/authorized_keys*", "*/.ssh/authorized_keys*", "~/.gitconfig", "~/.config/git/config",
    "~/.config/git/attributes", "~/.vimrc", "~/.vim/*", "~/.config/nvim/*", "~/.emacs", "~/.emacs.d/*",
    "~/.tmux.conf", "~/.config/tmux/*", "~/.npmrc", "~/.yarnrc*", "~/.pythonrc*", "~/.local/bin/*", "~/bin/*",
    "~/.local/share/applications/*", "~/Library/LaunchAgents/*", "~/.config/laca/*", "~/.curlrc", "~/.wgetrc",
    "~/.condarc", "~/.config/pip/*", "~/.pip/*", "~/.docker/config.json", "~/.kube/config", "~/.cargo/config*",
    "~/.lesskey", "~/.less", "~/.config/lesskey", "~/.aws/config", "~/.gradle/init.gradle*", "~/.gradle/init.d/*",
    "~/.hgrc", "~/.config/hg/*", "~/.gdbinit", "~/.config/gdb/*", "~/.screenrc", "~/.config/direnv/*",
    "~/.terraformrc", "~/.m2/settings.xml", "~/.ipython/profile_*/startup/*", "~/.config/git/*",
    "/etc/*", "/etc/*/*", "/var/spool/cron*", "/var/spool/cron/*", "/var/spool/at*", "/var/spool/at/*",
    "/Library/LaunchAgents/*", "/Library/LaunchDaemons/*", "*/site-packages/*.pth", "*/dist-packages/*.pth",
    "*/site-packages/sitecustomize.py", "*/site-packages/usercustomize.py", ".git/hooks", ".git/hooks/*",
    "*/.git/hooks", "*/.git/hooks/*", ".git/config", "*/.git/config", "*.git/hooks/*", ".git/info/attributes",
)
HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdout",
                    "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/fd/*", "/dev/pts/*", "/dev/shm/*", "/proc/self/fd/*")
LACA_FILES = (".laca", ".laca/*", ".mcp.json", "framework_config.yaml", "tools.yaml", "FRAMEWORK_CONTEXT.md")


def show(path: str) -> str:
    """The resolved path as the user would write it."""
    if path == HOME:
        return "~"
    return "~" + path[len(HOME):] if path.startswith(HOME + "/") else path


ANY_HOME = re.compile(r"^(?:/home/[^/]+|/Users/[^/]+|/root)(?=/|$)")


def _home_form(path: str) -> str:
    """For matching: any home directory counts as `~` (the policy does not know which user runs it)."""
    return ANY_HOME.sub("~", path)


def glob_match(name: str, pattern: str) -> bool:
    """Could bash's pattern expand to `name`? Per path component; a wildcard does not match a leading dot."""
    names, pats = name.rstrip("/").split("/"), pattern.rstrip("/").split("/")
    if len(names) != len(pats):
        return False
    for n, p in zip(names, pats, strict=True):
        if n.startswith(".") and p[:1] in ("*", "?", "["):
            return False
        if not fnmatchcase(n, p):
            return False
    return True


def _concrete(patterns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p for p in patterns if not any(c in p for c in "*?["))


@lru_cache(maxsize=None)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for a whole pattern set: checking a word costs one match, not one per pattern."""
    return re.compile("|".join(f"(?:{translate(p)})" for p in patterns))


def _matches(path: str, patterns: tuple[str, ...], glob: bool, samples: tuple[str, ...] = ()) -> bool:
    p = _home_form(path)
    rx = _compiled(patterns)
    if rx.match(p) or rx.match(p.rstrip("/")):
        return True
    if glob:  # a pattern: could it expand to a protected path?
        return any(glob_match(sample, p) for sample in _concrete(patterns) + samples)
    return False


def is_home(path: str) -> bool:
    return path == HOME or bool(re.fullmatch(r"/(home|Users)/[^/]+|/root", path))


def deletion_reason(path: str, glob: bool = False) -> str | None:
    """Why deleting `path` recursively (or what the pattern matches) would be catastrophic, or None."""
    p = path.rstrip("/") or "/"
    if not p.startswith("/"):
        if re.fullmatch(r"\.\.(/\.\.)*(/\*)?", p):
            return "a parent of the working directory (which may be your home)"
        return None
    if is_home(p):
        return "the home directory"
    if p in SYSTEM_DIRS:
        return "the root of the file system" if p == "/" else f"the system directory {p}"
    if _home_form(p) in HOME_DIRS_KEPT:
        return f"{_home_form(p)} (keys and settings)"
    if glob:
        parent, _, leaf = p.rpartition("/")
        parent = parent or "/"
        if "*" in leaf and not any(c in parent for c in "*?[") and (is_home(parent) or parent in SYSTEM_DIRS):
            return f"everything in {show(parent)}"
        candidates = SYSTEM_DIRS + ("/home/§", "/home/other", "/Users/other") + tuple(
            HOME + d[1:] for d in HOME_DIRS_KEPT)
        hit = next((c for c in candidates if glob_match(c, p)), None)
        if hit:
            return f"{show(hit)}, which the pattern {show(p)} matches"
    return None


def device_reason(path: str) -> str | None:
    """A disk or memory device by any path (/dev/sda, /dev/disk/by-id/…, /dev/mapper/…); None for harmless ones."""
    if not path.startswith("/dev/") or any(fnmatchcase(path, h) for h in HARMLESS_DEVICES):
        return None
    return f"the device {path}"


PERSISTENCE_SAMPLES = ("~/.bashrc", "~/.profile", "~/.zshrc", "~/.bash_profile", "~/.ssh/authorized_keys",
                       ".git/hooks/pre-commit", ".git/config", "~/.config/autostart/x.desktop")


def persistence_reason(path: str, glob: bool = False) -> str | None:
    if _matches(path, PERSISTENCE, glob, PERSISTENCE_SAMPLES):
        return f"{show(path)} is run or read later by a shell, a scheduler, git or Python (persistence)"
    return None


def write_reason(path: str, glob: bool = False) -> tuple[bool, str]:
    """(dangerous, why) for writing `path`. Dangerous: devices, persistence files, system trees."""
    dev = device_reason(path)
    if dev:
        return True, f"writes {dev}"
    if any(fnmatchcase(path, h) for h in HARMLESS_DEVICES):
        return False, ""
    why = persistence_reason(path, glob)
    if why:
        return True, f"writes {why}"
    if any(path == t or path.startswith(t + "/") for t in SYSTEM_TREES):
        return True, f"writes into the system directory {path}"
    if _matches(path, LACA_FILES, glob):
        return False, f"writes {show(path)}, LACA's own workspace configuration"
    return False, f"writes {show(path)}" + (" (outside the working directory)" if outside(path) else "")


def outside(path: str) -> bool:
    """Is the resolved path outside the working directory (absolute, home, or climbing with ..)?"""
    return path.startswith("/") or path == ".." or path.startswith("../")


TEMPLATES = re.compile(r"(^|/)\.env\.(example|sample|template|dist|defaults?)$")


#: Credential file names a pattern is tried against in its own directory (`config/secret*`, `*/*.key`).
CREDENTIAL_NAMES = (".env", ".env.local", ".env.production", "secrets.yml", "secrets.yaml", "secrets.json",
                    "credentials", "credentials.json", "id_rsa", "id_ed25519", "server.key", "tls.pem",
                    "terraform.tfvars", "terraform.tfstate", ".npmrc", ".pypirc", ".netrc", ".git-credentials",
                    "service-account.json", "keystore.jks", ".htpasswd", ".pgpass", "vault.kdbx", ".envrc")


def _names_beside(pattern: str) -> tuple[str, ...]:
    """Credential names in every directory the pattern's own directory part names literally. A last part
    that is only `*` (every visible name, as listers give) is left to the samples above, or `wc -l *` and
    `git ls-files | xargs wc -l` would ask in every workspace."""
    head, _, last = pattern.rpartition("/")
    if last in ("*", "**"):
        return ()
    if any(c in head for c in "*?["):  # a pattern directory: try the names one and two levels below a sample
        return tuple(f"{d}/{n}" for d in ("x", "x/y") for n in CREDENTIAL_NAMES) + CREDENTIAL_NAMES
    return tuple(f"{head}/{n}" if head else n for n in CREDENTIAL_NAMES)


def secret_reason(path: str, glob: bool = False) -> str | None:
    """What secret reading `path` reveals ("the credential file ~/.ssh/id_rsa"), or None."""
    samples = CREDENTIAL_SAMPLES + (_names_beside(path) if glob else ())
    if TEMPLATES.search(path) or not (_matches(path, CREDENTIALS, glob, samples) or (
            path.lower() != path and _matches(path.lower(), CREDENTIALS, glob, samples))):
        return None  # (a case-insensitive file system opens .ENV as .env)
    shown = _home_form(path)
    if "environ" in shown:
        return f"a process environment ({shown})"
    if "history" in shown:
        return f"the shell history {shown}"
    if shown.startswith(("~/.bash", "~/.profile", "~/.zsh", "~/.config/fish")) or shown.endswith(".envrc"):
        return f"{shown}, where tokens are often exported"
    return f"the credential file {shown}"


@lru_cache(maxsize=1)
def _credential_dirs() -> tuple[str, ...]:
    """The directories above every concrete credential location (~/.config above ~/.config/gh …)."""
    out: set[str] = set()
    for c in _concrete(CREDENTIALS) + CREDENTIAL_SAMPLES:
        parts = c.split("/")
        out.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return tuple(sorted(d for d in out if d not in ("", ".")))


def holds_secrets(path: str) -> bool:
    """A directory with credentials somewhere below it (home, ~/.config, /, /proc, /etc …)."""
    p = path.rstrip("/") or "/"
    return is_home(p) or p in ("/", "/home", "/Users", "/proc", "/etc", "/root", "/var") or \
        _home_form(p) in _credential_dirs()


def is_credential_path(path: str, home: str = "") -> str | None:
    """For file tools: `path` is absolute (or workspace-relative); `home` is the real home directory."""
    p = path.strip()
    if home and (p == home.rstrip("/") or p.startswith(home.rstrip("/") + "/")):
        p = HOME + p[len(home.rstrip("/")):]
    return f"{path} may hold credentials" if secret_reason(p) else None


#: Where a read is known to reveal nothing private: the system's own public files. /etc but its private
#: files; /proc/self but its environment and memory; harmless devices. Everything else outside the workspace
#: (the home, /root, /var, /tmp, /run, /srv, /mnt, other processes) is not known and asks.
PUBLIC_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/snap", "/nix", "/sys",
                "/etc", "/proc/self", "/proc/thread-self", "/System", "/Library/Frameworks")
PUBLIC_FILES = ("/proc/cpuinfo", "/proc/meminfo", "/proc/version", "/proc/loadavg", "/proc/uptime", "/proc/stat",
                "/proc/filesystems", "/proc/mounts", "/proc/partitions", "/proc/swaps", "/proc/devices",
                "/proc/modules", "/proc/diskstats", "/proc/vmstat", "/proc/zoneinfo", "/proc/interrupts",
                "/proc/sys/*", "/proc/net/*", "/proc/pressure/*", "/proc/cgroups", "/proc/crypto", "/proc/misc",
                "/proc/buddyinfo", "/proc/slabinfo", "/proc/cmdline", "/proc/consoles", "/proc/locks")
PRIVATE = ("/etc/shadow*", "/etc/gshadow*", "/etc/sudoers", "/etc/sudoers.d", "/etc/sudoers.d/*", "/etc/ssh/*key*",
           "/etc/ssl/private", "/etc/ssl/private/*", "/etc/pki/*private*", "/etc/security/opasswd",
           "/etc/NetworkManager/system-connections", "/etc/NetworkManager/system-connections/*",
           "/etc/wpa_supplicant/*", "/etc/ppp/*secrets", "/etc/krb5.keytab", "/etc/libvirt/*secret*",
           "/etc/docker/key.json", "/etc/openvpn/*", "/etc/wireguard", "/etc/wireguard/*", "/etc/ipsec.secrets",
           "/etc/credstore*", "/etc/letsencrypt/*", "/etc/mysql/debian.cnf", "/etc/.pwd.lock", "/etc/cron*",
           "/etc/*.key", "/etc/*/*.key", "/etc/*/*/*.key", "/etc/*.pem", "/etc/*/*.pem", "/etc/*/private/*",
           "/etc/rancher/*", "/etc/kubernetes/*", "/etc/netplan/*", "/etc/postfix/sasl*", "/etc/samba/*",
           "/proc/self/environ", "/proc/self/mem", "/proc/self/task/*/environ", "/proc/self/task/*/mem",
           "/proc/thread-self/environ", "/proc/thread-self/mem", "/proc/self/cwd", "/proc/self/cwd/*",
           "/proc/self/root", "/proc/self/root/*", "/proc/self/fd/*", "/proc/self/map_files/*")
PRIVATE_SAMPLES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh/ssh_host_rsa_key",
                   "/etc/ssl/private/x.key", "/proc/self/environ", "/etc/krb5.keytab")


def _under(path: str, trees: tuple[str, ...]) -> bool:
    return any(path == t or path.startswith(t + "/") for t in trees)


def read_location_problem(path: str, glob: bool = False, recursive: bool = False) -> str | None:
    """Why reading `path` (a resolved path, or a pattern) is not known to be harmless, or None: it must be in
    the workspace (relative, not climbing out) or in a public system location, and not a secret's shape."""
    p = path.rstrip("/") or "/"
    if not p.startswith("/"):
        if p == ".." or p.startswith("../"):
            return f"{p} is outside the workspace"
        return None
    if any(fnmatchcase(p, h) for h in HARMLESS_DEVICES) and not p.startswith("/proc/self/fd/"):
        return None
    if glob:
        static = p.split("*")[0].split("?")[0].split("[")[0].rsplit("/", 1)[0] or "/"
        if not _under(static, PUBLIC_TREES):
            return f"the pattern {show(p)} reaches outside the workspace and the system's public files"
        if any(glob_match(s, p) for s in PRIVATE_SAMPLES):
            return f"the pattern {show(p)} can match a private system file"
    if _matches(p, PRIVATE, False) or (recursive and any(s.startswith(p + "/") for s in PRIVATE_SAMPLES)):
        return f"{show(p)} is private to the system" if not recursive else f"{show(p)} holds private system files"
    if _under(p, PUBLIC_TREES) or any(fnmatchcase(p, f) for f in PUBLIC_FILES):
        return None
    return f"{show(p)} is outside the workspace and the system's public files"


#: Variables whose value is known not to be a secret: the shell's own and the session's public settings.
#: Expanding or printing any other variable asks: whether it holds a secret is not known by its name
#: (MYSQL_PWD, REDIS_URL, SLACK_WEBHOOK_URL).
KNOWN_VARIABLES = frozenset({
    "PATH", "HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "HOSTNAME", "UID",
    "EUID", "PPID", "BASHPID", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "EPOCHSECONDS", "EPOCHREALTIME",
    "BASH_VERSION", "BASH_VERSINFO", "BASH", "OSTYPE", "HOSTTYPE", "MACHTYPE", "SHLVL", "COLUMNS", "LINES",
    "TMPDIR", "EDITOR", "VISUAL", "PAGER", "TZ", "IFS", "OPTIND", "OPTARG", "REPLY", "PIPESTATUS", "FUNCNAME",
    "BASH_SOURCE", "BASH_LINENO", "GROUPS", "DIRSTACK", "PS1", "PS2", "PS4", "HISTSIZE", "MAPFILE", "COLORTERM",
    "DISPLAY", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "VIRTUAL_ENV", "CONDA_DEFAULT_ENV", "CONDA_PREFIX", "GOPATH", "GOROOT", "JAVA_HOME", "CARGO_HOME",
    "RUSTUP_HOME", "NVM_DIR", "PYENV_ROOT", "CI", "TERM_PROGRAM", "NO_COLOR", "MAKEFLAGS", "PYTHONPATH",
})


def known_variable(name: str) -> bool:
    """Specials ($1, $?, $@ …), LC_* and the known list."""
    return not name or not (name[0].isalpha() or name[0] == "_") or name == "_" or name in KNOWN_VARIABLES or \
        name.startswith("LC_")
