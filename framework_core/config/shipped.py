"""Where the files LACA ships with are found: the default `framework_config.yaml`, `FRAMEWORK_CONTEXT.md`,
the personas and the documents the context file names.

In a checkout they sit at the repository's top level, next to `framework_core/`, where a reader expects them.
An installed package cannot reach that folder, so the wheel carries a copy of the same files in
`framework_core/_defaults/`, put there by the build (`setup.py`, which reads `FILES` from this module).
This module is the one place that knows both locations; it imports only the standard library so the build can
read it without importing LACA.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["BUNDLE", "CONFIG_NAME", "CONTEXT_NAME", "FILES", "shipped_dir"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # framework_core/
#: the folder inside the package that holds the copy in an installed wheel
BUNDLE = "_defaults"
CONFIG_NAME = "framework_config.yaml"
CONTEXT_NAME = "FRAMEWORK_CONTEXT.md"
#: what the wheel carries, relative to the repository's top level (a folder is copied whole); the documents
#: are the ones FRAMEWORK_CONTEXT.md names, so a default session finds every one of them
FILES = (CONFIG_NAME, CONTEXT_NAME, "personas", "docs/engineering_standards.md", "docs/tool_use.md")


@cache
def shipped_dir() -> Path:
    """The folder holding the shipped defaults: the package's own copy when installed, else the checkout's
    top level."""
    bundled = PACKAGE_DIR / BUNDLE
    if (bundled / CONFIG_NAME).is_file():
        return bundled
    return PACKAGE_DIR.parent
