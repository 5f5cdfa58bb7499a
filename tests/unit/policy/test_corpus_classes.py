"""The adversarial corpus, one data file per class of attack (and the daily commands that must stay Safe).

Each line of `corpus/*.txt` is `level<TAB>command`; ⏎ stands for a newline. The commands are only ever
classified, never run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.policy.classifier import classify_command
from framework_core.policy.levels import Level

CORPUS = Path(__file__).with_name("corpus")


def load(name: str) -> list[tuple[str, str]]:
    cases = []
    for line in (CORPUS / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        level, cmd = line.split("\t", 1)
        assert level in ("safe", "needs_confirm", "dangerous"), f"{name}: bad level in {line!r}"
        cases.append((level, cmd.replace("⏎", "\n")))
    return cases


FILES = sorted(p.name for p in CORPUS.glob("*.txt"))
CASES = [(f, level, cmd) for f in FILES for level, cmd in load(f)]


def test_every_class_has_many_spellings() -> None:
    assert len(FILES) >= 10
    for f in FILES:
        assert len(load(f)) >= 20, f"{f} is too small to stand for a class"


@pytest.mark.parametrize(("corpus", "expected", "cmd"), CASES, ids=[f"{f[:-4]}:{c[:50]}" for f, _, c in CASES])
def test_corpus_case(corpus: str, expected: str, cmd: str) -> None:
    verdict = classify_command(cmd)
    assert verdict.level.label == expected, f"{cmd!r}: got {verdict.level.label}: {verdict.reasons}"
    assert verdict.reasons, "every verdict explains itself"


@pytest.mark.parametrize("cmd", [c for _, c in load("network.txt")])
def test_network_use_is_flagged_and_never_safe(cmd: str) -> None:
    verdict = classify_command(cmd)
    assert verdict.network, f"{cmd!r} uses the network but the verdict does not say so: {verdict.reasons}"
    assert verdict.level > Level.SAFE


@pytest.mark.parametrize("cmd", [c for level, c in load("daily.txt") if level == "safe"])
def test_safe_commands_never_get_the_network(cmd: str) -> None:
    assert not classify_command(cmd).network
