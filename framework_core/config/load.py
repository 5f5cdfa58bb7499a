"""Layered config: built-in defaults < framework file < user file (XDG) < workspace file < --config < env < flags.

Every value remembers the layer it came from, for `config show`. Errors name file, line and key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from framework_core.config.dirs import user_config_path
from framework_core.errors import ConfigError
from framework_core.config.shipped import CONFIG_NAME, CONTEXT_NAME, shipped_dir

__all__ = ["LoadedConfig", "Overrides", "load_config", "read_yaml_file", "resolve_api_key"]

# `Overrides` is imported before the REPL draws its prompt; the readers and the error translator (and pydantic,
# heavy, for the models) load only when a config is read.
if TYPE_CHECKING:
    from typing import Callable

    from framework_core.config.models import FrameworkConfig
    from framework_core.config.yaml_load import YamlDoc
    from framework_core.config.trust import TrustDecision
    from framework_core.config.trust_files import WorkspaceFiles

#: keys whose values are paths, resolved against the directory of the file that set them
PATH_KEYS = {("context_definition_file",), ("teps_settings", "allowlist_file")}
PATH_LIST_KEYS = {("tools_files",), ("teps_settings", "rule_files")}
ENV_VARS = {"LACA_PROVIDER": ("llm_provider",), "LACA_PERSONA": ("default_persona",),
            "LACA_CONTEXT_FILE": ("context_definition_file",)}


@dataclass
class Overrides:
    """What the command line says (highest layer)."""

    config_path: str | None = None
    provider: str | None = None
    model: str | None = None
    persona: str | None = None
    sandbox: str | None = None
    trust: bool = False  # --trust: trust this workspace's additions (recorded like a "yes" at the question)
    #: The workspace's addition files as the trust question read them (config/trust_files.py): the load parses
    #: these texts, not the files again; `answered`: key -> digest of each item the user said yes to there.
    workspace_files: Any = None
    answered: dict[str, str] = field(default_factory=dict)


def _empty_trust() -> "TrustDecision":
    from framework_core.config.trust import TrustDecision

    return TrustDecision()


@dataclass
class LoadedConfig:
    config: "FrameworkConfig"
    sources: dict[tuple[str, ...], str] = field(default_factory=dict)  # key path -> layer label
    files: list[Path] = field(default_factory=list)
    workspace: Path = field(default_factory=Path.cwd)
    trust: "TrustDecision" = field(default_factory=lambda: _empty_trust())
    #: Broken layers LACA started without (the user's or the workspace's file): what is wrong and what it ignored.
    ignored: list[str] = field(default_factory=list)

    def source_of(self, path: tuple[str, ...]) -> str:
        for n in range(len(path), 0, -1):
            if path[:n] in self.sources:
                return self.sources[path[:n]]
        return "default"


def read_yaml_file(path: Path) -> tuple[dict[str, Any], Any]:
    """Parse a YAML mapping; return (data, node) where the node gives line numbers for later errors."""
    from framework_core.config.yaml_load import load_yaml_mapping

    doc = load_yaml_mapping(path, what="config file")
    return doc.data, doc.node


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    """Relative paths are relative to the file that names them. Only strings: anything else is left for
    validation to report with its real type."""
    def fix(p: Any) -> Any:
        return str((base / os.path.expanduser(p)).resolve()) if isinstance(p, str) else p

    for keys in PATH_KEYS | PATH_LIST_KEYS:
        parent: Any = data
        for k in keys[:-1]:
            parent = parent.get(k) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or keys[-1] not in parent or parent[keys[-1]] is None:
            continue
        val = parent[keys[-1]]
        parent[keys[-1]] = [fix(v) for v in val] if isinstance(val, list) else fix(val)


def _merge(into: dict[str, Any], new: dict[str, Any], label: str, sources: dict, prefix: tuple = ()) -> None:
    for key, val in new.items():
        path = prefix + (key,)
        if isinstance(val, dict) and isinstance(into.get(key), dict):
            _merge(into[key], val, label, sources, path)
        elif isinstance(val, dict) and val and key not in into:
            into[key] = {}  # record each key the layer sets, not the whole mapping: the rest are defaults
            _merge(into[key], val, label, sources, path)
        else:
            into[key] = val
            for p in [p for p in sources if p[: len(path)] == path]:
                del sources[p]
            sources[path] = label


def _source_of(sources: dict[tuple[str, ...], str], loc: tuple[Any, ...]) -> str | None:
    for n in range(len(loc), 0, -1):
        label = sources.get(tuple(str(p) for p in loc[:n]))
        if label is not None:
            return label
    return None


def blame(exc: Any, docs: dict[str, YamlDoc], sources: dict[tuple[str, ...], str]) -> ConfigError:
    """A ConfigError for a pydantic ValidationError, blaming the layer that set the bad value."""
    from framework_core.config.load_errors import explain, key_path, pydantic_error
    from framework_core.config.models import FrameworkConfig

    err = exc.errors()[0]
    loc = tuple(err["loc"])
    label = _source_of(sources, loc)
    doc = docs.get(label or "")
    if doc is None and label is None:  # a missing key: blame the last file that has its parent
        for candidate in reversed(list(docs.values())):
            if candidate.line_of(loc[:-1]):
                doc = candidate
                break
    if doc is not None:
        return pydantic_error(exc, doc, model=FrameworkConfig)
    msg, key = explain(err, FrameworkConfig), key_path(loc)
    if label in ("env", "flag"):
        return ConfigError(f"{msg} (set by {'an environment variable' if label == 'env' else 'a command-line flag'})",
                           key=key)
    return ConfigError(msg, key=key)


def _validate(data: dict[str, Any], docs: dict[str, YamlDoc], sources: dict[tuple[str, ...], str]) -> "FrameworkConfig":
    from pydantic import ValidationError

    from framework_core.config.models import FrameworkConfig

    try:
        return FrameworkConfig.model_validate(data)
    except ValidationError as exc:
        raise blame(exc, docs, sources) from None


def config_layers(workspace: Path, overrides: Overrides) -> list[tuple[str, Path]]:
    shipped = shipped_dir() / CONFIG_NAME
    layers = [("framework", shipped), ("user", user_config_path())]
    ws = workspace / CONFIG_NAME
    if ws.resolve() != shipped.resolve():
        layers.append(("workspace", ws))
    if overrides.config_path:
        p = Path(overrides.config_path).expanduser()
        if not p.is_file():
            raise ConfigError(f"--config file not found: {p}")
        layers.append(("--config", p))
    return layers


def _read_layers(workspace: Path, overrides: Overrides, data: dict[str, Any],
                 sources: dict[tuple[str, ...], str], gate: "Callable[[dict[str, Any]], dict[str, Any]]",
                 files: "WorkspaceFiles", skip: frozenset[str] = frozenset()) -> dict[str, YamlDoc]:
    """Merge the file layers in order; the workspace's own file (its text as read once, `files`) passes
    through `gate` (workspace trust). Layers whose path is in `skip` are left out."""
    from framework_core.config.yaml_load import load_yaml_mapping

    docs: dict[str, YamlDoc] = {}
    for label, path in config_layers(workspace, overrides):
        if str(path) in skip:
            continue
        if label == "workspace":
            doc = _workspace_layer(files)
            if doc is None:
                continue
        elif not path.is_file() and not path.is_fifo():
            continue
        else:
            doc = load_yaml_mapping(path, what="config file")
        _resolve_paths(doc.data, path.parent)
        full = f"{label} ({path})"
        _merge(data, gate(doc.data) if label == "workspace" else doc.data, full, sources)
        docs[full] = doc
    return docs


def _workspace_layer(files: "WorkspaceFiles") -> "YamlDoc | None":
    from framework_core.config.trust_files import CONFIG
    from framework_core.config.yaml_load import as_mapping, parse_yaml

    text = files.text(CONFIG)
    if text is None:
        return None
    path = files.path(CONFIG)
    return as_mapping(parse_yaml(text, path), path)


def workspace_layer(files: "WorkspaceFiles") -> dict[str, Any] | None:
    """The workspace config file's values as the load sees them (paths resolved), from the text read once;
    None when there is none, or it is LACA's shipped file. Raises ConfigError naming a broken file."""
    if (files.workspace / CONFIG_NAME).resolve() == (shipped_dir() / CONFIG_NAME).resolve():
        return None
    doc = _workspace_layer(files)
    if doc is None:
        return None
    _resolve_paths(doc.data, files.workspace)
    return doc.data


def _trust_gate(workspace: Path, overrides: Overrides, data: dict[str, Any], given: "TrustDecision | None",
                files: "WorkspaceFiles"):
    """A gate for the workspace layer and a getter for the decision it made (made once, on first need)."""
    from framework_core.config import trust as tr

    made: list[tr.TrustDecision] = []

    def decision(layer: dict[str, Any]) -> tr.TrustDecision:
        if not made:
            listed = data.get("trusted_workspaces") or []
            trust_all = overrides.trust or tr.listed_by_user(workspace, listed if isinstance(listed, list) else [])
            additions = [a for a, _ in tr.config_additions(layer, workspace, files)] + tr.file_additions(workspace,
                                                                                                        files)
            made.append(given or tr.decide(workspace, additions, tr.default_store(), trust_all=trust_all,
                                           answered=overrides.answered, files=files))
        return made[0]

    def gate(layer: dict[str, Any]) -> dict[str, Any]:
        return tr.filter_layer(layer, decision(layer).approved)

    return gate, lambda: decision({})


def _unknown_provider(cfg: "FrameworkConfig", docs: dict[str, YamlDoc],
                      sources: dict[tuple[str, ...], str]) -> ConfigError:
    from framework_core.config.load_errors import at_key

    valid = ", ".join(sorted(cfg.llm_settings)) or "(none configured)"
    msg = f"unknown provider '{cfg.llm_provider}'. Valid providers: {valid}"
    label = sources.get(("llm_provider",))
    doc = docs.get(label or "")
    if doc is not None:
        return at_key(msg, doc, ("llm_provider",))
    where = {"env": " (from $LACA_PROVIDER)", "flag": " (from --provider)"}.get(label or "", "")
    return ConfigError(msg + where, key="llm_provider")


def load_config(workspace: Path | None = None, overrides: Overrides | None = None,
                env: Mapping[str, str] | None = None, trust: "TrustDecision | None" = None, *,
                lenient: bool = False) -> LoadedConfig:
    """The layered config. The workspace's own additions apply only as far as `trust` (or, when None, the
    trust store, `--trust` and the user's `trusted_workspaces`) allows; see framework_core/config/trust.py.

    `lenient` (the REPL and `laca doctor`): a broken user or workspace file (YAML LACA cannot read, or a value
    of the wrong type) does not stop LACA: the load starts again without that file and `LoadedConfig.ignored`
    says which file, line and key, and that its settings are ignored. Otherwise, and always for a broken
    `--config` file, flag or environment variable (named for this run), it is a ConfigError."""
    workspace = (workspace or Path.cwd()).resolve()
    overrides = overrides or Overrides()
    own = {str(user_config_path()), str(workspace / CONFIG_NAME)}
    skip: set[str] = set()
    ignored: list[str] = []
    while True:
        try:
            loaded = _load(workspace, overrides, env, trust, frozenset(skip))
        except ConfigError as exc:
            where = _broken_layer(exc, own - skip, workspace) if lenient else None
            if where is None:
                raise
            skip.add(where)
            ignored.append(f"{exc} — LACA started without {where}: none of its settings apply this session. Fix "
                           "it and start LACA again.")
            continue
        loaded.ignored = ignored
        return loaded


def _broken_layer(exc: ConfigError, candidates: set[str], workspace: Path) -> str | None:
    """Which of the user's and the workspace's files a ConfigError blames, or None."""
    if exc.path is None:
        return None
    path = str(Path(exc.path).expanduser())
    for candidate in candidates:
        if path == candidate or Path(path).resolve() == Path(candidate).resolve():
            return candidate
    return None


def _load(workspace: Path, overrides: Overrides, env: Mapping[str, str] | None, trust: "TrustDecision | None",
          skip: frozenset[str]) -> LoadedConfig:
    overrides = overrides or Overrides()
    environ: Mapping[str, str] = os.environ if env is None else env
    data: dict[str, Any] = {}
    sources: dict[tuple[str, ...], str] = {}
    from framework_core.config.trust_files import WorkspaceFiles

    given = overrides.workspace_files
    files = given if isinstance(given, WorkspaceFiles) and given.for_workspace(workspace) else \
        WorkspaceFiles.read(workspace)
    gate, decision = _trust_gate(workspace, overrides, data, trust, files)
    docs = _read_layers(workspace, overrides, data, sources, gate, files, skip)
    env_layer: dict[str, Any] = {}
    for var, keys in ENV_VARS.items():
        if environ.get(var):
            env_layer[keys[0]] = environ[var]
    _merge(data, env_layer, "env", sources)
    flags: dict[str, Any] = {}
    if overrides.provider:
        flags["llm_provider"] = overrides.provider
    if overrides.persona:
        flags["default_persona"] = overrides.persona
    if overrides.sandbox:
        flags["sandbox"] = {"profile": overrides.sandbox}
    _merge(data, flags, "flag", sources)
    model = overrides.model or environ.get("LACA_MODEL")
    prov = data.get("llm_provider", "openai")
    if model and isinstance(data.setdefault("llm_settings", {}), dict) and isinstance(prov, str):
        entry = data["llm_settings"].setdefault(prov, {})
        if isinstance(entry, dict):
            entry["model"] = model
            sources[("llm_settings", prov, "model")] = "flag" if overrides.model else "env"
    if "context_definition_file" not in data:
        data["context_definition_file"] = str(shipped_dir() / CONTEXT_NAME)
    cfg = _validate(data, docs, sources)
    if cfg.llm_provider not in cfg.llm_settings:
        raise _unknown_provider(cfg, docs, sources)
    return LoadedConfig(cfg, sources, [d.path for d in docs.values()], workspace, decision())


def resolve_api_key(cfg: "FrameworkConfig", provider: str | None = None,
                    env: Mapping[str, str] | None = None) -> str | None:
    """The key for a provider, or None when it needs none. Raises MissingApiKeyError naming the env var."""
    from framework_core.errors import MissingApiKeyError

    environ: Mapping[str, str] = os.environ if env is None else env
    name = provider or cfg.llm_provider
    var = cfg.api_key_env(name)
    if not var:
        return None
    key = environ.get(var, "").strip()
    if not key:
        raise MissingApiKeyError(name, var)
    return key
