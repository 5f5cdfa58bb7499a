"""Program specifications: they load with every example checked, long options match as the program
parses them, and a specification that contradicts its examples is refused when it loads."""

from __future__ import annotations

import pytest

from framework_core.policy.context import Ctx, Word
from framework_core.policy.known import judge_with, program_name, registry
from framework_core.policy.levels import Level
from framework_core.policy.spec import SpecError, check_examples, parse, spec


def test_all_specifications_load_and_satisfy_their_examples() -> None:
    specs = registry()
    assert len(specs) > 100
    examples = sum(len(s.ok) + len(s.ask) for s in specs.values())
    assert examples > 250


def test_a_specification_contradicting_its_examples_is_refused() -> None:
    bad = {"ls": spec("ls", "-l --long", ok=("ls -l", "ls --color"), ask=("ls --long",))}
    with pytest.raises(SpecError) as err:
        check_examples(bad, lambda argv: judge_with(bad, [Word(a) for a in argv], Ctx())[0].level == Level.SAFE)
    assert "'ls --color' should be harmless" in str(err.value) and "'ls --long' should ask" in str(err.value)


@pytest.mark.parametrize(("args", "problem"), [
    (["--open-files=sh", "x"], "--open-files (read as --open-files-in-pager)"),
    (["--open", "x"], "--open (read as --open-files-in-pager)"),
    (["-Ovim", "x"], "-O runs a program"),
    (["--line-n", "x"], ""),  # a unique abbreviation of a harmless option
    (["--te", "x"], "may be read as --textconv"),  # ambiguous (--text, --textconv), one reading risky
    (["--c", "x"], "not known to be harmless"),  # ambiguous among harmless ones: git refuses it
])
def test_long_options_match_as_git_parses_them(args: list[str], problem: str) -> None:
    grep = registry()["git"].subcommands["grep"]
    got = parse(grep, args).problem
    assert (problem in got) if problem else got == "", got


def test_value_options_take_their_value_and_flags_do_not() -> None:
    sort = registry()["sort"]
    assert parse(sort, ["-k", "2", "f"]).operands == [2]
    assert parse(sort, ["-rn", "f"]).operands == [1]
    assert "writes" in parse(sort, ["-no", "x", "f"]).problem
    assert parse(sort, ["-o", "x"]).written == [(1, "x")]


@pytest.mark.parametrize(("word", "name"), [("ls", "ls"), ("/usr/bin/ls", "ls"), ("/bin/cat", "cat"),
                                            ("//usr//bin/ls", "ls"), ("./ls", None), ("/tmp/evil/ls", None),
                                            ("/usr/local/bin/ls", None), ("/usr/bin/../../tmp/ls", None),
                                            ("bin/ls", None)])
def test_a_program_named_by_a_path_is_known_only_in_system_directories(word: str, name: str | None) -> None:
    assert program_name(Word(word)) == name
