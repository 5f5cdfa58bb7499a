"""Paths hidden from sandboxed commands (they read as empty) wherever the view would otherwise show them.

Inside the sandbox only the system's program trees, the workspace and an empty home showing what
`home_allow.yaml` lists exist (`view.py`), so credentials elsewhere need no list. This module names what must
not show even inside those: the user's `sandbox.hidden_paths`, LACA's own folders and installation, and, only
when the workspace is the home itself (then shown read-only as it is), the well-known credential locations
below. `view.build` hides those the mounts would show; `view.check` proves none does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: Relative to the home directory.
HOME_SECRETS = (
    ".ssh", ".aws", ".azure", ".config/gcloud", ".netrc", ".docker", ".kube", ".gnupg",
    ".password-store", ".local/share/keyrings", ".git-credentials", ".config/gh", ".npmrc", ".pypirc",
    ".cargo/credentials", ".cargo/credentials.toml", ".config/hub", ".terraform.d/credentials.tfrc.json",
    ".vault-token", ".pgpass", ".my.cnf", ".bash_history", ".zsh_history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst",
    ".local/share/fish/fish_history", ".config/laca", ".local/share/laca", ".claude", ".codex",
    ".config/openai", ".anthropic",
)


@dataclass(frozen=True)
class Hidden:
    path: str  # absolute
    is_dir: bool


def hidden_paths(home: Path, extra: list[str] | tuple[str, ...] = (), laca_dirs: tuple[Path, ...] = (),
                 home_secrets: tuple[str, ...] = HOME_SECRETS) -> list[Hidden]:
    """The existing paths to hide. A path that does not exist needs no hiding: the sandbox's root is
    read-only, so nothing can create it."""
    candidates = [home / rel for rel in home_secrets] + list(laca_dirs)
    candidates += [Path(os.path.expanduser(p)) for p in extra]
    out: list[Hidden] = []
    seen: set[str] = set()
    for path in candidates:
        if not path.is_absolute():
            continue
        try:
            real = Path(os.path.realpath(path))
            if not os.path.lexists(path):
                continue
            is_dir = real.is_dir()
        except OSError:
            continue
        if str(real) not in seen:  # a symlink is hidden where it points
            seen.add(str(real))
            out.append(Hidden(str(real), is_dir))
    return out
