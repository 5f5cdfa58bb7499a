"""The shipped lock is what the suite runs against: every package pinned in requirements/test.txt is installed at
exactly that version (when this environment was made by `make`, from the lock), and the lock covers every
dependency pyproject.toml names."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def pins(lock: Path) -> dict[str, tuple[str, str | None]]:
    out = {}
    for line in lock.read_text().splitlines():
        m = PIN.match(line)
        if m:
            out[_norm(m.group(1))] = (m.group(2), m.group(3))
    return out


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_dependency_in_pyproject_is_in_both_locks_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    run, test = pins(ROOT / "requirements/run.txt"), pins(ROOT / "requirements/test.txt")
    for dep in project["dependencies"]:
        name = _norm(re.split(r"[<>=~!; \[]", dep, maxsplit=1)[0])
        assert name in run and name in test, f"{name} is not in the lock: run `make lock`"
    for dep in project["optional-dependencies"]["test"]:
        assert _norm(re.split(r"[<>=~!; \[]", dep, maxsplit=1)[0]) in test
    text = (ROOT / "requirements/test.txt").read_text()
    assert len(re.findall(r"^[A-Za-z0-9_.-]+==", text, re.M)) <= text.count("--hash=sha256:")


@pytest.mark.skipif(not (Path(sys.prefix) / ".installed").exists(),
                    reason="this environment was not made by `make` from the shipped lock")
def test_the_installed_versions_are_the_locked_ones() -> None:
    wrong = []
    for name, (version, marker) in pins(ROOT / "requirements/test.txt").items():
        if marker and "sys_platform == 'linux'" not in marker and "python" not in marker:
            continue  # a package for another platform
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            if marker:
                continue
            wrong.append(f"{name}: not installed (locked {version})")
            continue
        if installed != version:
            wrong.append(f"{name}: {installed} installed, {version} locked")
    assert not wrong, "; ".join(wrong) + " — run `make clean test`"
