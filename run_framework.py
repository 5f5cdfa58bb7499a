#!/usr/bin/env python3
"""LACA entry point: `python run_framework.py [options]` (same as the `laca` console script).

Works from any directory: the current directory is the workspace. When run by a Python that lacks the
dependencies, it re-runs itself with the project's `.venv` (created by `make run` / `make test`).
"""

import os
import sys
from importlib.util import find_spec
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DEPENDENCIES = ("prompt_toolkit", "typer", "rich", "openai", "anthropic", "yaml", "pydantic", "tree_sitter",
                "tree_sitter_bash", "mcp")
if not all(find_spec(name) for name in DEPENDENCIES):  # cheap: nothing is imported here
    venv_python = HERE / ".venv" / "bin" / "python"
    if venv_python.exists() and Path(sys.prefix).resolve() != (HERE / ".venv").resolve():
        os.execv(str(venv_python), [str(venv_python), __file__, *sys.argv[1:]])
    sys.exit(f"laca: dependencies are not installed. Run `make run` in {HERE} once (it creates .venv).")

from framework_core.app.entry import main  # noqa: E402

if __name__ == "__main__":
    main()
