"""What a long-running server's sandbox (`Sandbox.server_wrapper`, stdio MCP servers) adds to a command's: the
folders of its `roots:` setting, and the seccomp filter in a file (the MCP SDK starts the process, not us, so
the filter cannot be handed over as a descriptor).
"""

from __future__ import annotations

import os
from pathlib import Path

from framework_core.sandbox.hidden import Hidden


def root_mounts(home_plan: dict, roots: tuple[Path, ...], write: bool, *, home: Path,
                secrets: list[Hidden]) -> dict:
    """A server's roots (a grant the trust question showed) with the workspace's access: bound writable with
    `write`, else read-only (outside them, the workspace and the system nothing exists for the server). Never a
    root that is, holds or lies in a credential path or LACA's own folders (`secrets`), nor one that holds the
    home (it would undo the home's allowlist). Returns `home_plan` with them added (`writable` or `read_only`)."""
    real_home = os.path.realpath(home)
    granted = [str(r) for r in roots if r.is_dir() and not near_hidden(r, secrets)
               and not (real_home + "/").startswith(str(r).rstrip("/") + "/")]
    return {**home_plan, ("writable" if write else "read_only"): tuple(granted)}


def near_hidden(root: Path, hidden: list[Hidden]) -> bool:
    """A root that is, holds or lies in a hidden credential path is not bound: it would uncover the hidden."""
    return any(root == Path(h.path) or root in Path(h.path).parents or Path(h.path) in root.parents for h in hidden)


def seccomp_file(folder: Path) -> Path | None:
    """The seccomp filter written once into `folder` (the session's runtime folder); None where there is none."""
    from framework_core.sandbox.seccomp import filter_for

    prog = filter_for()
    if prog is None:
        return None
    path = folder / "seccomp.bpf"
    if not path.exists():
        path.write_bytes(prog)
    return path
