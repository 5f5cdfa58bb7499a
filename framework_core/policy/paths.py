"""Pure path knowledge: credential files, system directories, persistence locations, block devices."""

from __future__ import annotations

import re
from fnmatch import fnmatch

CREDENTIAL_PATTERNS = [
    ".env", ".env.*", "*.env", "*/.env", "*/.env.*", "~/.ssh", "~/.ssh/*", "*/.ssh/*", "~/.aws", "~/.aws/*",
    "~/.config/gcloud*", "~/.kube/config", "~/.kube/*", "~/.netrc", "*/.netrc", "~/.npmrc", "~/.pypirc",
    "~/.docker/config.json", "*.pem", "*.key", "*id_rsa*", "*id_ed25519*", "*id_ecdsa*", "~/.gnupg*",
    "~/.git-credentials", "*/.git-credentials", "~/.config/gh/hosts.yml", "/etc/shadow", "/etc/gshadow",
    "/etc/sudoers", "~/.password-store*", "*credentials.json", "*/.aws/credentials", "~/.azure*",
]
SYSTEM_DIRS = {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root",
               "/sbin", "/srv", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin",
               "/usr/share", "/var/lib", "/var/log", "/mnt", "/media", "/snap", "/System", "/Library",
               "/Applications", "/Users"}
HOME_FORMS = {"~", "~/", "$HOME", "${HOME}", "~/*", "$HOME/*", "${HOME}/*", "~/.", "/home/*", "/Users/*", "/root"}
PERSISTENCE_PATTERNS = [
    "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.zshrc", "~/.zprofile",
    "~/.zshenv", "~/.zlogin", "~/.config/fish/*", "/etc/profile", "/etc/profile.d/*", "/etc/bash.bashrc",
    "/etc/zsh/*", "/etc/cron*", "/etc/cron*/*", "/var/spool/cron*", "~/.config/autostart/*",
    "~/.config/systemd/user/*", "/etc/systemd/*", "/lib/systemd/*", "~/.ssh/authorized_keys", "/etc/rc.local",
    "/etc/ld.so.preload", "/etc/sudoers", "/etc/sudoers.d/*", "~/Library/LaunchAgents/*", "/etc/environment",
    "~/.pam_environment", "~/.xprofile", "~/.xinitrc",
]
BLOCK_DEVICE = re.compile(r"^/dev/(sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d|md\d|dm-\d|mapper/|loop\d|sr\d)")


def home_form(path: str) -> str:
    """Write `$HOME/x`, `${HOME}/x` and `/root/x` as `~/x` so one set of patterns serves all."""
    for prefix in ("${HOME}", "$HOME"):
        if path == prefix or path.startswith(prefix + "/"):
            return "~" + path[len(prefix):]
    return path


def credential_reason(path: str, home: str = "") -> str | None:
    p = home_form(path.strip())
    if home and (p == home or p.startswith(home.rstrip("/") + "/")):
        p = "~" + p[len(home.rstrip("/")):]
    for pat in CREDENTIAL_PATTERNS:
        if fnmatch(p, pat) or fnmatch(p.rstrip("/"), pat):
            return f"{path} may hold credentials"
    return None


def is_credential_path(path: str, home: str = "") -> str | None:
    """Public name used by the decision layer."""
    return credential_reason(path, home)


def is_block_device(path: str) -> bool:
    return bool(BLOCK_DEVICE.match(path))


def is_persistence_path(path: str) -> bool:
    p = home_form(path.strip())
    return any(fnmatch(p, pat) for pat in PERSISTENCE_PATTERNS)


def catastrophic_target(path: str) -> str | None:
    """Why deleting `path` recursively would be catastrophic, or None."""
    p = home_form(path.strip())
    if p in HOME_FORMS or p.rstrip("/") in ("~", ""):
        return "the home directory" if p.startswith("~") or "HOME" in path else "the root of the file system"
    stripped = p.rstrip("/") or "/"
    if stripped in ("/", "/*", "/.", "/.."):
        return "the root of the file system"
    if stripped.endswith("/*"):
        stripped = stripped[:-2] or "/"
    if stripped in SYSTEM_DIRS:
        return f"the system directory {stripped}"
    if re.fullmatch(r"(\.\./)+\.\.?/?|\.\.", p):
        return None
    return None
