"""Very large or deeply nested command lines get an answer (never a hang or a traceback); one the
classifier cannot inspect completely asks, and a Dangerous part seen first stays Dangerous."""

from __future__ import annotations

import pytest

from framework_core.policy.classifier import _classify
from framework_core.policy.levels import Level

CASES = {
    "statements": ("; ".join(["ls -la"] * 5000), Level.NEEDS_CONFIRM),
    "danger first": ("rm -rf ~; " + "; ".join(["ls"] * 5000), Level.DANGEROUS),
    "danger last": ("; ".join(["ls"] * 5000) + "; rm -rf ~", Level.NEEDS_CONFIRM),
    "deep substitution": ("echo " + "$(" * 300 + "ls" + ")" * 300, Level.NEEDS_CONFIRM),
    "deep bash -c": ("bash -c " + "'bash -c '" * 50 + "ls", Level.NEEDS_CONFIRM),
    "huge here-document": ("cat <<EOF\n" + "x $(date) y\n" * 30000 + "EOF", Level.NEEDS_CONFIRM),
    "brace bomb": ("echo " + "{a,b}" * 40, Level.SAFE),
    "long word": ("echo " + "a" * 100_000, Level.SAFE),
    "unbalanced": ("echo $(( ( ( ( ( " * 100, Level.NEEDS_CONFIRM),
}


@pytest.mark.parametrize("name", CASES)
def test_large_inputs_get_an_answer(name: str) -> None:
    cmd, level = CASES[name]
    verdict = _classify(cmd)
    assert verdict.level == level, verdict.reasons[:3]
    assert verdict.reasons
