"""Secrets inside the workspace, hidden from every command: a command sees `.env` and its kind as empty files.

The workspace is the user's data and commands see it, with one exception: files shaped like credentials (the
policy's own list: `.env` and `.env.*` but not their templates, private keys, `credentials.json`, `.pgpass`,
`.netrc`, `terraform.tfstate`, …). A Safe command or one the user approved to run tests has no business reading
them, and what a command reads reaches the model. A project `.npmrc` is shown as a copy without its tokens, so
`npm install` keeps the project's registry settings. `sandbox.workspace_secrets_visible` names files a user wants
commands to see. The scan is bounded like the control-path scan (depth and folder count, skipping dependency
and build folders); a secret deeper than that is not hidden.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from framework_core.policy.paths import secret_reason
from framework_core.sandbox.walk import walk_files

#: Shown as a copy without credentials (a sanitiser of `sanitise.KINDS`) rather than hidden.
SANITISED = {".npmrc": "npmrc", ".yarnrc.yml": "npmrc", "pip.conf": "urls", ".pypirc": "urls"}


@dataclass(frozen=True)
class Secret:
    rel: str  # relative to the workspace, POSIX form
    reason: str
    sanitiser: str | None = None  # a kind of sanitise.KINDS: shown as a copy without credentials


def workspace_secrets(workspace: Path, visible: tuple[str, ...] = (), folders: list[str] | None = None
                      ) -> list[Secret]:
    """The files of the workspace shaped like credentials, except those the user made visible; the folders the
    scan read are added to `folders` when given."""
    shown = {PurePosixPath(v).as_posix().strip("/") for v in visible}
    found: list[Secret] = []
    for rel, entry in walk_files(workspace, folders=folders):
        if not entry.is_file(follow_symlinks=False) or rel in shown:
            continue
        reason = secret_reason(rel)
        if reason is not None:
            found.append(Secret(rel, reason, SANITISED.get(entry.name)))
    return sorted(found, key=lambda s: s.rel)


#: A folder changed this recently (by the local clock) may change again within its timestamp's granularity
#: (2 s on FAT) without its time changing: a scan that saw it is not trusted for the next command.
SETTLE_NS = 2_000_000_000


@dataclass(frozen=True)
class SecretScan:
    """A scan of the workspace's secrets and what proves it still holds: the identity and times of every folder
    it read. A file made, removed or renamed changes its folder's times (and a folder's mode, which decides
    what a scan can read, its change time), so a scan whose folders all read the same finds what a new one
    would."""

    secrets: tuple[Secret, ...]
    folders: tuple[tuple[str, tuple[int, int, int] | None], ...]
    settled: bool

    @classmethod
    def of(cls, workspace: Path, visible: tuple[str, ...] = (), settle_ns: int = SETTLE_NS) -> "SecretScan":
        started = time.time_ns()
        read: list[str] = []
        secrets = tuple(workspace_secrets(workspace, visible, read))
        folders = tuple((rel, _times(workspace, rel)) for rel in read)
        settled = all(t is not None and max(t[1], t[2]) < started - settle_ns for _, t in folders)
        return cls(secrets, folders, settled)

    def holds(self, workspace: Path) -> bool:
        """Nothing a new scan would see differently has changed since this one."""
        return self.settled and all(_times(workspace, rel) == times for rel, times in self.folders)


def _times(workspace: Path, rel: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(workspace / rel if rel else workspace, follow_symlinks=False)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns


def sanitised_copy(workspace: Path, secret: Secret, into: Path) -> Path | None:
    """A copy of the secret's file without its credentials, in `into`; None when it cannot be read."""
    from framework_core.sandbox.sanitise import KINDS

    assert secret.sanitiser is not None
    try:
        text = (workspace / secret.rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    out = into / secret.rel.replace("/", "__")
    out.write_text(KINDS[secret.sanitiser](text), encoding="utf-8")
    out.chmod(0o444)
    return out


def mentioned(secrets: list[Secret], command: str) -> list[str]:
    """The hidden files a command names (their base names appear in it): said with its result."""
    return [s.rel for s in secrets if not s.sanitiser and os.path.basename(s.rel) in command]
