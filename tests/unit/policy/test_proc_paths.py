"""/proc's aliases of the root, a working directory and an open descriptor are read as what they name, by the
one normaliser every read and write goes through (`policy/proc_paths.py`). Commands are only classified."""

from __future__ import annotations

import pytest

from framework_core.policy.classifier import classify_command
from framework_core.policy.levels import Level
from framework_core.policy.proc_paths import proc_readings


@pytest.mark.parametrize(("path", "cwd", "names"), [
    ("/proc/self/task/*/root/etc/shadow", "", "/etc/shadow"),
    ("/proc/1/task/2/root", "", "/"),
    ("/proc/thread-self/root/home", "", "/home"),
    ("/proc/self/cwd/a", "/srv", "/srv/a"),
    ("/proc/self/task/1/cwd/../x", "", "../x"),
    ("/proc/self/root/proc/self/cwd/x", "/srv", "/srv/x"),
    ("/dev/fd/0", "", "/dev/stdin"),
    ("/dev/fd/5", "", "/proc/self/fd/5"),
    ("/dev/fd/../environ", "", "/proc/self/environ"),  # /dev/fd is a link to /proc/self/fd
    ("/proc/self/status", "", "/proc/self/status"),
])
def test_an_alias_is_read_as_what_it_names(path: str, cwd: str, names: str) -> None:
    assert names in [p for p, _ in proc_readings(path, cwd)]


def test_a_pattern_where_the_link_is_names_every_link_it_can_match() -> None:
    got = [p for p, _ in proc_readings("/proc/self/*/etc/shadow", "")]
    assert "/etc/shadow" in got and "etc/shadow" in got


@pytest.mark.parametrize(("cmd", "level"), [
    ("cat /proc/self/task/*/root/etc/shadow", Level.NEEDS_CONFIRM),
    ("cat /proc/1/task/1/root/home/u/.config/gh/hosts.yml", Level.NEEDS_CONFIRM),
    ("cat /proc/self/task/*/cwd/../../etc/shadow", Level.NEEDS_CONFIRM),
    ("cat /dev/fd/5", Level.NEEDS_CONFIRM),
    ("find /proc/self/task/*/root/home -delete", Level.DANGEROUS),
    ("rm -rf /proc/thread-self/root/home", Level.DANGEROUS),
    ("echo x > /proc/self/task/1/root/home/u/.bashrc", Level.DANGEROUS),
    ("cat /dev/stdin", Level.SAFE),
    ("cat /dev/fd/0", Level.SAFE),
    ("cat /proc/self/status", Level.SAFE),
    ("cat /proc/self/cwd/README.md", Level.SAFE),
])
def test_commands_through_proc_are_judged_as_the_paths_they_reach(cmd: str, level: Level) -> None:
    verdict = classify_command(cmd)
    assert verdict.level == level, verdict.reasons
