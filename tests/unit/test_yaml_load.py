"""Start-up files are read defensively: bounded, strict, every error naming file, line and key."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from framework_core.config.load import load_config
from framework_core.config.dirs import user_config_path
from framework_core.errors import ConfigError
from framework_core.config.yaml_load import MAX_BYTES, load_json, load_yaml, load_yaml_mapping

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def alias_bomb(levels: int = 9, width: int = 9, key: str = "x") -> str:
    """The YAML "billion laughs": each level lists the previous one `width` times."""
    lines = [f"{key}0: &{key}0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{key}{i}: &{key}{i} [" + ", ".join([f"*{key}{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_with_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", alias_bomb())
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    msg = str(err.value)
    assert str(path) in msg and "line" in msg and "alias" in msg


def test_ordinary_anchors_and_merge_keys_still_work(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\nd: [*b, *b]\n")
    assert load_yaml(path).data == {"base": {"x": 1, "y": 2}, "c": {"x": 3, "y": 2}, "d": [{"x": 1, "y": 2}] * 2}


def test_recursive_alias_and_deep_nesting_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="recursive alias"):
        load_yaml(write(tmp_path / "r.yaml", "a: &a [1, *a]\n"))
    with pytest.raises(ConfigError, match="nested"):
        load_yaml(write(tmp_path / "d.yaml", "a: " + "[" * 500 + "]" * 500 + "\n"))


def test_duplicate_key_names_file_line_and_key(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "teps_settings:\n  command_timeout_s: 5\nllm_provider: openai\n"
                                      "teps_settings:\n  dry_run_enabled: true\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    msg = str(err.value)
    assert f"{path}, line 4 (key 'teps_settings')" in msg and "first given on line 1" in msg


def test_oversized_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with open(path, "wb") as fh:
        fh.truncate(50_000_000)  # sparse: costs no disk
    with pytest.raises(ConfigError, match=f"limit is {MAX_BYTES:,}"):
        load_yaml(path)


def test_non_utf8_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", b"a: 1\nb: caf\xe9\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    assert f"{path}, line 2" in str(err.value) and "UTF-8" in str(err.value)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "fifo.yaml"
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_yaml(path)


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a list"):
        load_yaml_mapping(write(tmp_path / "c.yaml", "- a\n- b\n"))
    assert load_yaml_mapping(write(tmp_path / "e.yaml", "")).data == {}


def test_json_duplicate_keys_and_syntax_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="duplicate key 'a'"):
        load_json(write(tmp_path / "a.json", '{"a": 1, "a": 2}'))
    with pytest.raises(ConfigError, match="line 2"):
        load_json(write(tmp_path / "b.json", '{"a": 1,\n "b": }'))


# ---- the config layers --------------------------------------------------------------------------------

def test_error_in_user_file_is_blamed_on_the_user_file(workspace: Path) -> None:
    user = write(user_config_path(), "teps_settings:\n  command_timeout_s: soon\n")
    write(workspace / "framework_config.yaml", "teps_settings:\n  dry_run_enabled: false\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    msg = str(err.value)
    assert msg.startswith(f"{user}, line 2 (key 'teps_settings.command_timeout_s')")
    assert "'soon'" in msg


def test_type_error_names_the_type_and_the_key(workspace: Path) -> None:
    path = write(workspace / "framework_config.yaml", "llm_provider: openai\ntools_files: 5\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    assert f"{path}, line 2 (key 'tools_files')" in str(err.value)


def test_non_string_paths_are_not_turned_into_strings(workspace: Path) -> None:
    path = write(workspace / "framework_config.yaml", "teps_settings:\n  rule_files: [1]\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    assert str(err.value) == (f"{path}, line 2 (key 'teps_settings.rule_files[0]'): "
                              "Input should be a valid string (got 1)")


def test_an_unknown_key_names_the_keys_allowed_there(workspace: Path) -> None:
    path = write(workspace / "framework_config.yaml", "mcp_servers:\n  s:\n    command: x\n    permision: ask\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    assert str(err.value).startswith(f"{path}, line 4 (key 'mcp_servers.s.permision'): unknown key 'permision'; "
                                     "expected one of: ") and ", permission, " in str(err.value)


def test_unknown_key_says_so(workspace: Path) -> None:
    write(workspace / "framework_config.yaml", "teps_settings:\n  comand_timeout_s: 5\n")
    with pytest.raises(ConfigError, match="unknown key 'comand_timeout_s'"):
        load_config(workspace, env={})


def test_unknown_provider_is_blamed_on_its_layer(workspace: Path) -> None:
    path = write(workspace / "framework_config.yaml", "llm_provider: nope\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    assert str(err.value).startswith(f"{path}, line 1 (key 'llm_provider')")
    with pytest.raises(ConfigError, match=r"LACA_PROVIDER"):
        load_config(workspace, env={"LACA_PROVIDER": "nope2"})


def test_alias_bombs_split_over_user_and_workspace_stay_bounded(workspace: Path) -> None:
    """Each layer may use anchors up to the limit; merging two of them stays quick."""
    write(user_config_path(), "llm_settings:\n  openai:\n    models: &m [" + ", ".join(["a"] * 300) + "]\n"
                              "  vllm:\n    models: *m\n")
    write(workspace / "framework_config.yaml", alias_bomb(levels=9, width=9, key="w"))
    with pytest.raises(ConfigError, match="alias"):
        load_config(workspace, env={})


@pytest.mark.parametrize("kind", ["config", "tools", "rules"])
def test_alias_bomb_under_a_memory_limit(tmp_path_factory: pytest.TempPathFactory, kind: str) -> None:
    """In a child process limited to 1 GB of address space, every start-up file refuses a bomb placed
    where the loader would walk it, quickly and by name."""
    where = {"config": "mcp_servers:\n  s:\n    args: *x8\n", "tools": "tools: *x8\n", "rules": "rules: *x8\n"}[kind]
    bomb = write(tmp_path_factory.mktemp("b") / f"{kind}.yaml", alias_bomb() + where)
    call = {"config": "from framework_core.config.load import read_yaml_file as f; f(p)",
            "tools": "from framework_core.tools.declared import load_tools_file as f; f(p)",
            "rules": "from framework_core.config.rule_files import load_rule_file as f; f(p)"}[kind]
    code = textwrap.dedent(f"""
        import resource, sys
        from pathlib import Path
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from framework_core.errors import ConfigError
        p = Path(sys.argv[1])
        try:
            {call}
        except ConfigError as exc:
            print("refused:", exc)
    """)
    run = subprocess.run([sys.executable, "-c", code, str(bomb)], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "refused:" in run.stdout and "anchors and aliases" in run.stdout, run.stdout


def test_rule_file_shape_errors_name_line_and_key(tmp_path: Path) -> None:
    from framework_core.config.rule_files import load_rule_file

    path = write(tmp_path / "rules.yaml", "rules: 5\n")
    with pytest.raises(ConfigError) as err:
        load_rule_file(path)
    assert f"{path}, line 1 (key 'rules')" in str(err.value) and "a number" in str(err.value)
    dup = write(tmp_path / "dup.yaml", "rules:\n  - {action: allow, prefix: [ls], action: deny}\n")
    with pytest.raises(ConfigError, match="duplicate key 'action'"):
        load_rule_file(dup)


def test_tools_file_errors_name_the_line(tmp_path: Path) -> None:
    from framework_core.tools.declared import load_tools_file

    path = write(tmp_path / "tools.yaml", "tools:\n  - name: t\n    description: d\n    type: cli\n"
                                          "    config:\n      command: [echo]\n      timeout: soon\n")
    with pytest.raises(ConfigError) as err:
        load_tools_file(path)
    assert f"{path}, line " in str(err.value), str(err.value)
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_tools_file(write(tmp_path / "bad.yaml", b"tools: [\xff]\n"))


@pytest.mark.parametrize(("name", "text", "where", "problem"), [
    ("a.yaml", "rules: 5\n", "line 1 (key 'rules')", "'rules' must be a list of rules, not a number"),
    ("b.yaml", "rules:\n  - {name: z, action: maybe, prefix: [ls]}\n", "line 2 (key 'rules[0].action')",
     "rule 'z': Input should be 'allow' or 'deny' (got 'maybe')"),
    ("c.yaml", "rules:\n  - name: x\n    action: allow\n", "line 2 (key 'rules[0]')",
     "rule 'x': give exactly one of command, prefix or tool"),
    ("d.yaml", "rules:\n  - action: allow\n    prefix: [ls]\n    examples_match:\n      - ls -l\n      - pwd\n",
     "line 6 (key 'rules[0].examples_match[1]')", "rule '#1': example 'pwd' should match but does not"),
    ("e.yaml", "rulez: []\n", "line 1 (key 'rulez')", "unknown key 'rulez'; only 'rules:' is allowed"),
    ("h.yaml", "rules:\n  - name: w\n    action: deny\n    prefx: [rm]\n", "line 4 (key 'rules[0].prefx')",
     "rule 'w': unknown key 'prefx'; expected one of: name, action, command, prefix, tool, examples_match, "
     "examples_no_match (check the spelling and the indentation)"),
    ("g.txt", "make test\nnpm 'run\n", "line 2", "cannot read this allowlist line: No closing quotation"),
])
def test_a_broken_rule_file_names_file_line_key_and_problem(tmp_path: Path, name: str, text: str, where: str,
                                                             problem: str) -> None:
    from framework_core.config.rule_files import load_rule_file

    path = write(tmp_path / name, text)
    with pytest.raises(ConfigError) as err:
        load_rule_file(path)
    assert str(err.value) == f"{path}, {where}: {problem}"


def test_a_file_that_ends_inside_something_left_open_names_the_line_that_opened_it(tmp_path: Path) -> None:
    path = tmp_path / "framework_config.yaml"
    path.write_text("llm_settings:\n  openai:\n    model: [oops\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, None)
    assert str(err.value).startswith(f"{path}, line 3: invalid YAML: ") and "before the file ended" in str(err.value)


def test_a_syntax_error_inside_the_file_names_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "framework_config.yaml"
    path.write_text("llm_provider: openai\nllm_settings: [a\nb: c\n")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, None)
    message = str(err.value)
    assert message.startswith(f"{path}, line 3: invalid YAML: ") and "Fix the syntax on that line" in message
