"""The program catalog: one entry per program, typed option values, data before code.

The catalog loads with no name defined twice and every judge it names backed by code; an option's kind
(`:read`, `:write`, `:exec`, `:net`, `:inside`) decides how its value is judged; `Need` and `Refuse` say what
`check=` functions used to; a broken entry is refused with the catalog file named."""

from __future__ import annotations

import pytest

from framework_core.policy import catalog, interp, programs
from framework_core.policy.catalog.entry import Fixed, Program
from framework_core.policy.classifier import classify_command
from framework_core.policy.context import Ctx, Word
from framework_core.policy.known import judge_with, registry
from framework_core.policy.levels import Level
from framework_core.policy.spec import Need, Refuse, Spec, SpecError, check_examples, parse, parse_opts, spec


def test_every_program_is_one_entry_and_every_named_judge_is_code() -> None:
    entries = catalog.programs()
    assert len({id(p) for p in entries.values()}) > 350
    interp_judges = interp.SHELL_JUDGES | {"language", "eval", "source", "make", "watch", "xargs"}
    for name, where in catalog.JUDGES.items():
        if where == "programs.py":
            assert name in programs.JUDGES, name
        if where == "interp.py":
            assert name in interp_judges, name
    used = {p.judge for p in entries.values() if p.judge}
    assert used == set(catalog.JUDGES), "a judge no entry names is dead code"


def test_a_name_defined_twice_is_refused_naming_both_files() -> None:
    with pytest.raises(SpecError) as err:
        catalog.index([("files", [spec("ls", "-l")]), ("dev", [Program("dir", aliases=("ls",))])])
    assert "ls is defined twice: in catalog/files.py and catalog/dev.py" in str(err.value)


@pytest.mark.parametrize(("entry", "message"), [
    (Program("x", judge="nope"), "names the judge 'nope'"),
    (Program("x", traits=frozenset({"flies"})), "unknown trait 'flies'"),
])
def test_an_unknown_judge_or_trait_is_refused(entry: Program, message: str) -> None:
    with pytest.raises(SpecError) as err:
        catalog.index([("dev", [entry])])
    assert message in str(err.value) and "catalog/dev.py" in str(err.value)


@pytest.mark.parametrize(("syntax", "role", "why", "writes"), [
    ("-f=:read", "read", "", False),
    ("-C=:inside", "inside", "", False),
    ("-o=:write", "risk", "writes a file", True),
    ("--pre=:exec", "risk", "runs a command", False),
    ("--proxy=:net", "risk", "talks to the network", False),
    ("-n=", "ok", "", False),
])
def test_an_option_kind_says_how_its_value_is_judged(syntax: str, role: str, why: str, writes: bool) -> None:
    (opt,) = parse_opts(syntax).values()
    assert (opt.role, opt.why, opt.writes, opt.arg) == (role, why, writes, "value")


@pytest.mark.parametrize(("syntax", "problem"), [("-o:write", "needs a value"), ("-o=:delete", "unknown kind")])
def test_a_kind_on_a_flag_or_an_unknown_kind_is_refused(syntax: str, problem: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_opts(syntax)
    assert problem in str(err.value)


def test_a_written_value_is_judged_as_a_write_target_and_plain_text_is_not() -> None:
    assert classify_command("sort -o ~/.bashrc names.txt").level == Level.DANGEROUS  # sort's -o=:write
    assert classify_command("sort -o sorted.txt names.txt").level == Level.NEEDS_CONFIRM
    tag = classify_command("git tag -m ~/.bashrc v1")  # a message, not a file: asks, nothing written
    assert tag.level == Level.NEEDS_CONFIRM and "writes or changes the repository" in tag.reasons[0]
    assert "-o writes a file" in parse(registry()["sort"], ["-o", "x"]).problem


def test_need_and_refuse_say_what_check_functions_said() -> None:
    s = spec("tool", "-l -q", operands="text", needs=Need(frozenset({"-l"}), "tool without -l changes things"),
             refuse=(Refuse("operand", "^@", "an @file operand reads more arguments"),),
             ok=("tool -l x",), ask=("tool x", "tool -l @f"))
    specs = {"tool": s}
    def harmless(argv: list[str]) -> bool:
        verdict = judge_with(specs, [Word(a) for a in argv], Ctx())[0]
        return verdict is not None and verdict.level == Level.SAFE

    check_examples(specs, harmless)
    assert parse(s, ["-q"]).problem == "tool without -l changes things"
    assert parse(s, ["-l", "@args"]).problem == "an @file operand reads more arguments"
    named = Need(frozenset({"--list"}), "with a name it creates", with_operands=True)
    assert named.problem([], []) == "" and named.problem(["x"], ["x"]) == "with a name it creates"
    assert Refuse("first", "^hosts", "asks DNS").problem(["passwd", "hosts"], ["passwd", "hosts"]) == ""


def test_only_the_checks_data_cannot_say_remain_code() -> None:
    def all_specs() -> list[tuple[str, Spec]]:
        out: list[tuple[str, Spec]] = []
        stack = [(n, s) for n, s in registry().items() if s.program == n]
        while stack:
            name, s = stack.pop()
            out.append((name, s))
            stack += [(f"{name} {k}", v) for k, v in s.subcommands.items()]
        return out

    with_code = sorted(name for name, s in all_specs() if s.check is not None)
    assert with_code == ["awk", "git config", "ip", "printenv", "ps", "sed", "tar", "unzip"]


def test_a_fixed_verdict_and_a_judge_come_from_the_entry() -> None:
    sudo, rm = catalog.entry("sudo"), catalog.entry("rm")
    assert sudo is not None and sudo.fixed == Fixed("dangerous", "privilege escalation")
    assert rm is not None and rm.judge == "rm" and rm.spec is None and "exact-grants" in rm.traits
    assert classify_command("modprobe x").reasons == ('"modprobe x": modprobe changes the kernel, capabilities or '
                                                      'namespaces of the host',)
    docker = catalog.entry("docker")
    assert docker is not None and docker.spec is not None and docker.net is not None and docker.judge == "container"


def test_an_alias_is_its_program() -> None:
    assert catalog.entry("egrep") is catalog.entry("grep")
    assert classify_command("egrep -l TODO src | xargs cat").level == classify_command(
        "grep -l TODO src | xargs cat").level == Level.SAFE


#: Tables of program names that stay in code, each with why it is not a catalog fact.
CODE_TABLES = {
    ("builtins.py", "PAGER_VALUES"): "values of $PAGER, not programs run",
    ("find.py", "DESTROYS"): "what find -exec runs that destroys what it finds: find's own judgement",
    ("interp.py", "NETWORK_MODULES"): "python -m modules, not programs",
    ("interp.py", "_family"): "name prefixes of versioned interpreters (python3.12)",
    ("interp.py", "runner"): "the judge names of catalog/runners.py",
    ("interp.py", "run"): "the same, as the table runner() reads",
    ("network.py", "exfiltration"): "ssh's family: identity options are not secrets sent",
    ("programs.py", "JUDGES"): "the judge names of catalog/changes.py",
    ("programs.py", "systemctl"): "systemctl's verbs, not programs",
    ("simple.py", "LOCAL_PACKAGE_MANAGERS"): "package managers called by path, which are not catalog names",
    ("simple.py", "is_lister"): "how each lister's output is names (code)",
    ("simple.py", "names_only"): "the same, as the table is_lister() reads",
    ("simple.py", "lister_samples"): "where each lister's names are (code)",
    ("words.py", "STATIC_OUTPUT"): "what a trivial command prints inside $(…)",
}


def test_no_table_of_program_names_outside_the_catalog() -> None:
    """Adding a program means editing its catalog entry, not a set somewhere else (listed exceptions aside)."""
    import ast
    from pathlib import Path

    names = set(catalog.programs())
    found: set[tuple[str, str]] = set()
    for path in sorted((Path(catalog.__file__).parent.parent).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for owner in ast.walk(tree):
            if not isinstance(owner, (ast.Assign, ast.AnnAssign, ast.FunctionDef)):
                continue
            label = owner.name if isinstance(owner, ast.FunctionDef) else ast.unparse(
                owner.targets[0] if isinstance(owner, ast.Assign) else owner.target)
            for node in ast.walk(owner):
                elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
                if not isinstance(node, (ast.Set, ast.Dict, ast.Tuple, ast.List)) or elts is None:
                    continue
                strs = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                hits = [s for s in strs if s in names]
                if len(hits) >= 3 and len(hits) * 2 >= len(strs):
                    found.add((path.name, label))
    assert found <= set(CODE_TABLES), f"program names kept outside policy/catalog/: {sorted(found - set(CODE_TABLES))}"
    assert found == set(CODE_TABLES), f"exceptions no longer needed: {sorted(set(CODE_TABLES) - found)}"
