"""Layered config: built-in defaults < framework file < user file (XDG) < workspace file < --config < env < flags.

Every value remembers the layer it came from, for `config show`. Errors name file, line and key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framework_core.errors import ConfigError

if TYPE_CHECKING:  # pydantic is heavy: the models load only when a config is validated
    from framework_core.config import FrameworkConfig

FRAMEWORK_DIR = Path(__file__).resolve().parent.parent
CONFIG_NAME = "framework_config.yaml"
#: keys whose values are paths, resolved against the directory of the file that set them
PATH_KEYS = {("context_definition_file",), ("teps_settings", "allowlist_file")}
PATH_LIST_KEYS = {("tools_files",), ("teps_settings", "rule_files")}
ENV_VARS = {"LACA_PROVIDER": ("llm_provider",), "LACA_PERSONA": ("default_persona",),
            "LACA_CONTEXT_FILE": ("context_definition_file",)}


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "laca"


def user_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "laca"


def user_config_path() -> Path:
    return user_config_dir() / "config.yaml"


@dataclass
class Overrides:
    """What the command line says (highest layer)."""

    config_path: str | None = None
    provider: str | None = None
    model: str | None = None
    persona: str | None = None


@dataclass
class LoadedConfig:
    config: "FrameworkConfig"
    sources: dict[tuple[str, ...], str] = field(default_factory=dict)  # key path -> layer label
    files: list[Path] = field(default_factory=list)
    workspace: Path = field(default_factory=Path.cwd)

    def source_of(self, path: tuple[str, ...]) -> str:
        for n in range(len(path), 0, -1):
            if path[:n] in self.sources:
                return self.sources[path[:n]]
        return "default"


def _yaml_error(path: Path, exc: Exception) -> ConfigError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ConfigError(f"invalid YAML: {problem}. Fix the syntax on that line.", path=str(path), line=line)


def read_yaml_file(path: Path) -> tuple[dict[str, Any], Any]:
    """Parse a YAML mapping; return (data, node) where the node gives line numbers for later errors."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror}", path=str(path)) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(path, exc) from None
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a mapping of keys to values", path=str(path), line=1)
    return data, node


def line_of(node: Any, path: tuple[str | int, ...]) -> int | None:
    """1-based line of a key path inside a composed YAML node, best effort."""
    line = None
    for part in path:
        if node is None or not hasattr(node, "value") or not isinstance(node.value, list):
            break
        found = None
        for item in node.value:
            if isinstance(item, tuple) and getattr(item[0], "value", None) == part:
                found, line = item[1], item[0].start_mark.line + 1
                break
        node = found
    return line


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    for keys in PATH_KEYS | PATH_LIST_KEYS:
        parent: Any = data
        for k in keys[:-1]:
            parent = parent.get(k) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or keys[-1] not in parent or parent[keys[-1]] is None:
            continue
        val = parent[keys[-1]]
        fix = lambda p: str((base / os.path.expanduser(str(p))).resolve())  # noqa: E731
        parent[keys[-1]] = [fix(v) for v in val] if isinstance(val, list) else fix(val)


def _merge(into: dict[str, Any], new: dict[str, Any], label: str, sources: dict, prefix: tuple = ()) -> None:
    for key, val in new.items():
        path = prefix + (key,)
        if isinstance(val, dict) and isinstance(into.get(key), dict):
            _merge(into[key], val, label, sources, path)
        else:
            into[key] = val
            for p in [p for p in sources if p[: len(path)] == path]:
                del sources[p]
            sources[path] = label


def _validate(data: dict[str, Any], nodes: list[tuple[Path, Any]]) -> "FrameworkConfig":
    from pydantic import ValidationError

    from framework_core.config import FrameworkConfig

    try:
        return FrameworkConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(str(p) for p in err["loc"])
        key = ".".join(loc)
        for path, node in reversed(nodes):
            line = line_of(node, loc)
            if line:
                raise ConfigError(f"{err['msg']}", path=str(path), line=line, key=key) from None
        raise ConfigError(f"{err['msg']}", key=key) from None


def config_layers(workspace: Path, overrides: Overrides) -> list[tuple[str, Path]]:
    layers = [("framework", FRAMEWORK_DIR / CONFIG_NAME), ("user", user_config_path())]
    ws = workspace / CONFIG_NAME
    if ws.resolve() != (FRAMEWORK_DIR / CONFIG_NAME).resolve():
        layers.append(("workspace", ws))
    if overrides.config_path:
        p = Path(overrides.config_path).expanduser()
        if not p.is_file():
            raise ConfigError(f"--config file not found: {p}")
        layers.append(("--config", p))
    return layers


def load_config(workspace: Path | None = None, overrides: Overrides | None = None,
                env: dict[str, str] | None = None) -> LoadedConfig:
    workspace = (workspace or Path.cwd()).resolve()
    overrides = overrides or Overrides()
    env = os.environ if env is None else env
    data: dict[str, Any] = {}
    sources: dict[tuple[str, ...], str] = {}
    nodes: list[tuple[Path, Any]] = []
    files: list[Path] = []
    for label, path in config_layers(workspace, overrides):
        if not path.is_file():
            continue
        layer, node = read_yaml_file(path)
        _resolve_paths(layer, path.parent)
        _merge(data, layer, f"{label} ({path})", sources)
        nodes.append((path, node))
        files.append(path)
    env_layer: dict[str, Any] = {}
    for var, keys in ENV_VARS.items():
        if env.get(var):
            env_layer[keys[0]] = env[var]
    _merge(data, env_layer, "env", sources)
    flags: dict[str, Any] = {}
    if overrides.provider:
        flags["llm_provider"] = overrides.provider
    if overrides.persona:
        flags["default_persona"] = overrides.persona
    _merge(data, flags, "flag", sources)
    model = overrides.model or env.get("LACA_MODEL")
    if model:
        prov = data.get("llm_provider", "openai")
        data.setdefault("llm_settings", {}).setdefault(prov, {})["model"] = model
        sources[("llm_settings", prov, "model")] = "flag" if overrides.model else "env"
    if "context_definition_file" not in data:
        data["context_definition_file"] = str(FRAMEWORK_DIR / "FRAMEWORK_CONTEXT.md")
    cfg = _validate(data, nodes)
    if cfg.llm_provider not in cfg.llm_settings:
        cfg.provider()  # raises a ConfigError listing the valid names
    return LoadedConfig(cfg, sources, files, workspace)


def resolve_api_key(cfg: "FrameworkConfig", provider: str | None = None,
                    env: dict[str, str] | None = None) -> str | None:
    """The key for a provider, or None when it needs none. Raises MissingApiKeyError naming the env var."""
    from framework_core.errors import MissingApiKeyError

    env = os.environ if env is None else env
    name = provider or cfg.llm_provider
    var = cfg.api_key_env(name)
    if not var:
        return None
    key = env.get(var, "").strip()
    if not key:
        raise MissingApiKeyError(name, var)
    return key
