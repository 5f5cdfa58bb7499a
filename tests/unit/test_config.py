from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.config.load import Overrides, load_config, resolve_api_key
from framework_core.config.dirs import user_config_path
from framework_core.errors import ConfigError, MissingApiKeyError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_framework_defaults_load(workspace: Path) -> None:
    loaded = load_config(workspace, env={})
    assert loaded.config.llm_provider == "openai"
    providers = {"openai", "anthropic", "ollama", "vllm", "openrouter", "gemini", "lmstudio"}
    assert providers <= set(loaded.config.llm_settings)
    assert loaded.config.context_definition_file.endswith("FRAMEWORK_CONTEXT.md")
    assert loaded.source_of(("llm_provider",)).startswith("framework")


def test_layers_user_workspace_env_flag(workspace: Path) -> None:
    write(user_config_path(), "llm_provider: anthropic\nteps_settings:\n  command_timeout_s: 5\n")
    write(workspace / "framework_config.yaml", "teps_settings:\n  command_timeout_s: 7\n")
    loaded = load_config(workspace, env={})
    assert loaded.config.llm_provider == "anthropic"
    assert loaded.source_of(("llm_provider",)).startswith("user")
    assert loaded.config.teps_settings.command_timeout_s == 7
    assert loaded.source_of(("teps_settings", "command_timeout_s")).startswith("workspace")
    # env beats files, flags beat env
    assert load_config(workspace, env={"LACA_PROVIDER": "ollama"}).config.llm_provider == "ollama"
    flagged = load_config(workspace, Overrides(provider="vllm", model="m1"), env={"LACA_PROVIDER": "ollama"})
    assert flagged.config.llm_provider == "vllm"
    assert flagged.config.llm_settings["vllm"].model == "m1"
    assert flagged.source_of(("llm_settings", "vllm", "model")) == "flag"


def test_config_flag_file_layers_above_workspace(workspace: Path, tmp_path: Path) -> None:
    extra = write(tmp_path / "extra.yaml", "default_persona: catalyst\n")
    loaded = load_config(workspace, Overrides(config_path=str(extra)), env={})
    assert loaded.config.default_persona == "catalyst"
    with pytest.raises(ConfigError, match="not found"):
        load_config(workspace, Overrides(config_path=str(tmp_path / "nope.yaml")), env={})


def test_broken_yaml_names_file_and_line(workspace: Path) -> None:
    write(workspace / "framework_config.yaml", "llm_provider: openai\nteps_settings:\n  command_timeout_s: [1,\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    msg = str(err.value)
    assert "framework_config.yaml" in msg and "line" in msg


def test_invalid_value_names_key_and_line(workspace: Path) -> None:
    write(workspace / "framework_config.yaml", "teps_settings:\n  command_timeout_s: -3\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    assert "teps_settings.command_timeout_s" in str(err.value)
    assert "line 2" in str(err.value)


def test_unknown_key_is_rejected(workspace: Path) -> None:
    write(workspace / "framework_config.yaml", "llm_providr: openai\n")
    with pytest.raises(ConfigError, match="llm_providr"):
        load_config(workspace, env={})


def test_unknown_provider_lists_valid_ones(workspace: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(workspace, Overrides(provider="nosuch"), env={})
    assert "nosuch" in str(err.value) and "anthropic" in str(err.value) and "openai" in str(err.value)


def test_missing_key_names_env_var(workspace: Path) -> None:
    cfg = load_config(workspace, env={}).config
    with pytest.raises(MissingApiKeyError) as err:
        resolve_api_key(cfg, "anthropic", env={})
    assert "ANTHROPIC_API_KEY" in str(err.value)
    assert resolve_api_key(cfg, "anthropic", env={"ANTHROPIC_API_KEY": "sk-x"}) == "sk-x"
    assert resolve_api_key(cfg, "ollama", env={}) is None  # local servers need no key


def test_relative_paths_resolve_against_their_file(workspace: Path) -> None:
    write(workspace / "framework_config.yaml", "teps_settings:\n  allowlist_file: rules/allow.txt\n")
    loaded = load_config(workspace, env={})
    assert loaded.config.teps_settings.allowlist_file == str(workspace / "rules" / "allow.txt")


def test_code_theme_is_checked_against_pygments(workspace: Path) -> None:
    assert load_config(workspace, env={}).config.ui.code_theme == "monokai"
    write(workspace / "framework_config.yaml", "ui:\n  code_theme: solarized-light\n")
    assert load_config(workspace, env={}).config.ui.code_theme == "solarized-light"
    write(workspace / "framework_config.yaml", "ui:\n  code_theme: no-such-style\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, env={})
    assert "ui.code_theme" in str(err.value) and "line 2" in str(err.value) and "monokai" in str(err.value)
    from framework_core.config.models import UiSettings
    from framework_core.ui.markdown_render import DEFAULT_CODE_THEME

    assert UiSettings().code_theme == DEFAULT_CODE_THEME  # the renderer's default before the config loads


def test_user_dirs_follow_xdg_and_default_to_the_linux_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from framework_core.config.dirs import user_config_dir, user_data_dir

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert (user_config_dir(), user_data_dir()) == (tmp_path / "cfg" / "laca", tmp_path / "data" / "laca")
    assert user_config_path() == tmp_path / "cfg" / "laca" / "config.yaml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_config_dir() == tmp_path / "home" / ".config" / "laca"
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "laca"


def test_a_checkout_reads_the_defaults_at_the_top_level(workspace: Path) -> None:
    from framework_core.config.shipped import FILES, shipped_dir

    top = Path(__file__).resolve().parents[2]
    assert shipped_dir() == top
    assert all((top / name).exists() for name in FILES)
    loaded = load_config(workspace, env={})
    assert loaded.files[0] == top / "framework_config.yaml"
    assert Path(loaded.config.context_definition_file) == top / "FRAMEWORK_CONTEXT.md"


def test_the_wheel_carries_every_document_the_shipped_context_names() -> None:
    from framework_core.dcm import DynamicContextManager
    from framework_core.config.shipped import FILES, shipped_dir

    top = shipped_dir()
    dcm = DynamicContextManager(str(top / "FRAMEWORK_CONTEXT.md"))
    assert dcm.warnings == [] and {"forge", "catalyst"} <= set(dcm.persona_ids())
    carried = [top / name for name in FILES]
    for doc in dcm.documents():
        assert any(doc.source == path or path in doc.source.parents for path in carried), doc.source


def test_config_show_says_what_is_default_names_the_sdk_url_and_shows_the_active_provider(
        workspace: Path, monkeypatch) -> None:
    from framework_core.app.config_cmds import show_config

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    (workspace / "framework_config.yaml").write_text("teps_settings:\n  command_timeout_s: 33\n")
    text = show_config(Overrides(), workspace)
    lines = {line.split(" = ")[0]: line for line in text.splitlines() if " = " in line}
    source = "# workspace (" + str(workspace / "framework_config.yaml") + ")"
    assert lines["teps_settings.command_timeout_s"].endswith(source)
    assert lines["teps_settings.screen_output_lines"].endswith("# default")  # not "framework": no layer set it
    assert "the SDK uses $OPENAI_BASE_URL = http://127.0.0.1:9/v1" in lines["llm_settings.openai.base_url"]
    assert not any(k.startswith("llm_settings.anthropic") for k in lines)
    assert "Other providers: anthropic" in text
    assert "llm_settings.anthropic.model" in show_config(Overrides(), workspace, all_providers=True)


def test_a_broken_workspace_or_user_file_is_left_out_and_said_and_a_broken_config_flag_file_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from framework_core.config.load import Overrides, load_config
    from framework_core.config.dirs import user_config_path
    from framework_core.errors import ConfigError

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "framework_config.yaml").write_text("teps_settings:\n  command_timeout_s: [1\n")
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("ui:\n  agents_md_max_bytes: lots\n")
    with pytest.raises(ConfigError, match="line 2"):
        load_config(ws, Overrides())  # -p and everything else that is not the REPL or doctor: an error
    loaded = load_config(ws, Overrides(), lenient=True)
    assert len(loaded.ignored) == 2
    assert all("LACA started without" in line for line in loaded.ignored)
    assert any("framework_config.yaml, line 2" in line for line in loaded.ignored)
    assert any("agents_md_max_bytes" in line and str(user) in line for line in loaded.ignored)
    assert loaded.config.teps_settings.command_timeout_s != [1]  # the default: the file's settings do not apply
    flagged = tmp_path / "flag.yaml"
    flagged.write_text("teps_settings: [\n")
    with pytest.raises(ConfigError, match="flag.yaml"):
        load_config(ws, Overrides(config_path=str(flagged)), lenient=True)
