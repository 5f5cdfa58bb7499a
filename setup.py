"""Build step: the wheel carries LACA's shipped defaults inside the package.

The project's metadata is in pyproject.toml. The default config, context file, personas and documents live at
the repository's top level, where a checkout (and an editable install) reads them; a built package reads the
copy this step puts in `framework_core/_defaults/`. Which files, and where they go, is said once, in
`framework_core/config/shipped.py`.
"""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHIPPED = runpy.run_path(str(HERE / "framework_core" / "config" / "shipped.py"))


class BuildPyWithDefaults(build_py):
    """build_py, plus the copy of the shipped defaults (not in editable mode: the checkout's files are used)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = self._defaults_target()
        shutil.rmtree(target, ignore_errors=True)  # a file removed from the repository leaves no stale copy
        for name in SHIPPED["FILES"]:
            source, dest = HERE / name, target / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, dest)
            else:
                shutil.copy2(source, dest)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            outputs += [str(p) for p in self._defaults_target().rglob("*") if p.is_file()]
        return outputs

    def _defaults_target(self) -> Path:
        return Path(self.build_lib) / "framework_core" / SHIPPED["BUNDLE"]


setup(cmdclass={"build_py": BuildPyWithDefaults})
