"""Every command of the corpus gets its expected level, with at least one reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.policy.classifier import classify_command

CORPUS = Path(__file__).with_name("corpus.txt")


def load_corpus() -> list[tuple[str, str]]:
    cases = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        level, cmd = line.split("\t", 1)
        cases.append((level, cmd.replace("⏎", "\n")))
    return cases


CASES = load_corpus()


def test_corpus_is_large_and_covers_every_level() -> None:
    levels = [level for level, _ in CASES]
    assert len(CASES) >= 200
    assert {levels.count(x) >= 60 for x in ("safe", "needs_confirm", "dangerous")} == {True}


@pytest.mark.parametrize(("expected", "cmd"), CASES, ids=[c[:40] for _, c in CASES])
def test_corpus_case(expected: str, cmd: str) -> None:
    verdict = classify_command(cmd)
    assert verdict.level.label == expected, f"{cmd!r}: got {verdict.level.label}: {verdict.reasons}"
    assert verdict.reasons, "every verdict explains itself"
