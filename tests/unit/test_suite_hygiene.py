"""The test suite keeps its own rules: every test checks something, none swallows a failed assertion, and none
looks for processes by name across the machine (a test stops only what it started: tests/waiting.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# Calls that fail the test when what they check does not hold: pytest.raises/warns/fail, pexpect's expect and
# expect_exact, wait_for (tests/waiting.py), and the suite's helpers named assert_…, check_… or expect_….
CHECKING_CALLS = re.compile(r"^(assert_|check_|expect_|expect$|raises$|warns$|deprecated_call$|fail$|wait_for$)")
MACHINE_WIDE = re.compile(r"\b(pgrep|pkill|killall)\b|\bpsutil\b")
# Command lines as data: the policy's corpus classifies them, it never runs them.
COMMANDS_AS_DATA = TESTS / "unit" / "policy"


def suite_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if ".venv" not in p.parts)


def called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def checks_something(func: ast.AST) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and CHECKING_CALLS.match(called_name(node)):
            return True
    return False


def collected_tests(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    found = []
    for node in tree.body:
        scope = node.body if isinstance(node, ast.ClassDef) and node.name.startswith("Test") else [node]
        found += [f for f in scope if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and f.name.startswith("test")]
    return found


def swallowed_assertions(tree: ast.Module) -> list[int]:
    """Lines of `try:` blocks whose body asserts and whose handler only passes: a failure that cannot fail."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(n, ast.Assert) for b in node.body for n in ast.walk(b)):
            for handler in node.handlers:
                catches_assertion = handler.type is None or any(
                    isinstance(n, ast.Name) and n.id in ("AssertionError", "Exception", "BaseException")
                    for n in ast.walk(handler.type))
                if catches_assertion and all(isinstance(s, ast.Pass) for s in handler.body):
                    lines.append(node.lineno)
    return lines


def test_every_test_checks_something_and_swallows_no_failure() -> None:
    problems = []
    for path in suite_files():
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(TESTS.parent)
        problems += [f"{where}:{f.lineno} {f.name} asserts nothing"
                     for f in collected_tests(tree) if not checks_something(f)]
        problems += [f"{where}:{line} a try block swallows its assertion" for line in swallowed_assertions(tree)]
    assert not problems, "\n".join(problems)


def test_no_test_looks_for_processes_across_the_machine() -> None:
    problems = []
    for path in sorted(TESTS.rglob("*.py")):
        if COMMANDS_AS_DATA in path.parents or path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if MACHINE_WIDE.search(line):
                problems.append(f"{path.relative_to(TESTS.parent)}:{number}: {line.strip()}")
    assert not problems, "\n".join(problems + ["find the processes the test started instead (tests/waiting.py)"])
