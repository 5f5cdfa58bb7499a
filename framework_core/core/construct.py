"""How TEPS's parts are built from a loaded config: the policy (rule files, the workspace's only once trusted), the
tool registry (built-in and declared tools), the sandbox (the `sandbox.*` settings) and the undo store (its limit
from config). The app's wiring (`app/wiring.py`) and `TEPSEngine(config)` alone both build them here, so the
stable entry point decides exactly as the app does (docs/ARCHITECTURE.md, "Stable interfaces").
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from framework_core.config.dirs import user_config_dir, user_data_dir, user_state_dir
from framework_core.errors import ConfigError

if TYPE_CHECKING:
    from framework_core.config.load import LoadedConfig
    from framework_core.config.models import TepsSettings
    from framework_core.policy.decide import PolicyState
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.sandbox.undo_store import UndoStore
    from framework_core.tools.base import ToolRegistry

USER_RULES = "rules.yaml"
WORKSPACE_RULES = Path(".laca") / "rules.yaml"
WORKSPACE_TOOLS = "tools.yaml"


def rule_file_paths(loaded: "LoadedConfig") -> list[Path]:
    from framework_core.config.rule_files import settings_rule_files

    paths = settings_rule_files(loaded.config.teps_settings)
    for extra in (user_config_dir() / USER_RULES, loaded.workspace / WORKSPACE_RULES):
        if extra.is_file() and extra not in paths:
            paths.append(extra)
    return paths


def tool_file_paths(loaded: "LoadedConfig") -> list[Path]:
    paths = [Path(p) for p in loaded.config.tools_files]
    ws = (loaded.workspace / WORKSPACE_TOOLS).resolve()
    if ws.is_file() and ws not in [p.resolve() for p in paths]:
        paths.append(ws)
    return paths


def workspace_text(loaded: "LoadedConfig", name: str) -> str | None:
    """A workspace addition file's text as the trust decision read it (config/trust_files.py); None: read it
    now (no decision was made on it: a config loaded without one)."""
    files = loaded.trust.files
    return files.text(name) if files is not None and files.for_workspace(loaded.workspace) else None


def build_policy_state(loaded: "LoadedConfig") -> "PolicyState":
    from framework_core.config.rule_files import load_policy

    auto = str(loaded.workspace / WORKSPACE_RULES)  # read because it is there, not because the user named it
    text = workspace_text(loaded, str(WORKSPACE_RULES))
    return load_policy(rule_file_paths(loaded), texts={Path(auto): text} if text is not None else None,
                       keep=lambda r: r.source != auto or loaded.trust.allows(f"rule:{r.name}"))


def build_registry(loaded: "LoadedConfig") -> "ToolRegistry":
    from framework_core.tools.builtin import builtin_registry

    registry = builtin_registry()
    paths = tool_file_paths(loaded)
    if paths:
        from framework_core.tools.declared import load_tools_file

        for path in paths:
            if not path.is_file():
                raise ConfigError(f"tools file not found: {path}. Fix tools_files in framework_config.yaml.")
            auto = path.resolve() == (loaded.workspace / WORKSPACE_TOOLS).resolve() and str(path) not in [
                str(Path(p)) for p in loaded.config.tools_files]
            for spec in load_tools_file(path, workspace_text(loaded, WORKSPACE_TOOLS) if auto else None):
                if auto and not loaded.trust.allows(f"tool:{spec.name}"):
                    continue  # the workspace's own tools.yaml: only what the user trusted
                if spec.name in registry:
                    raise ConfigError(f"tool '{spec.name}' is defined twice", path=str(path))
                registry.register(spec)
    return registry


def build_sandbox(loaded: "LoadedConfig") -> "Sandbox":
    """The session's sandbox, with the home allowlist (shipped list plus `sandbox.home_allow`/`home_caches`)."""
    from framework_core.sandbox.home import load_allow
    from framework_core.sandbox.sandbox import Sandbox

    cfg = loaded.config.sandbox
    allow = load_allow().extended(cfg.home_allow, cfg.home_caches, home=Path.home(),
                                  where=loaded.source_of(("sandbox", "home_allow")))
    return Sandbox(cfg.profile, loaded.workspace, protected_extra=tuple(cfg.protected_paths),
                   hidden_extra=tuple(cfg.hidden_paths),
                   laca_dirs=(user_config_dir(), user_data_dir(), user_state_dir()),  # state: the overlays
                   use_overlay=cfg.overlay, max_apply_bytes=cfg.max_apply_bytes, home_allow=allow)


def build_undo(loaded: "LoadedConfig", folder: Path | None = None) -> "UndoStore":
    """In `folder` (the session's, so that `--continue` can still undo); without one, or where it cannot be made,
    in a temporary folder removed when the store is dropped or LACA exits."""
    from framework_core.sandbox.undo_store import UndoStore

    limit = loaded.config.sandbox.undo_max_mb * 1024 * 1024
    if folder is not None:
        try:
            return UndoStore(folder, limit, workspace=loaded.workspace)
        except OSError:
            pass  # a read-only or full data dir: undo for this run only
    temp = tempfile.mkdtemp(prefix="laca-undo-")
    store = UndoStore(temp, limit, workspace=loaded.workspace)
    weakref.finalize(store, shutil.rmtree, temp, True)
    return store


def standalone_config(config: "TepsSettings | dict[str, Any] | LoadedConfig | None", workspace: Path
                      ) -> "LoadedConfig":
    """The config `TEPSEngine(config)` builds from when no app built its parts: the layers the app loads for
    this workspace (the user's file, the workspace's as far as it is trusted, env vars), with the given
    `teps_settings` keys on top."""
    from framework_core.config.load import LoadedConfig, load_config
    from framework_core.config.models import TepsSettings

    if isinstance(config, LoadedConfig):
        return config
    loaded = load_config(workspace)
    given = (config.model_dump(exclude_unset=True) if isinstance(config, TepsSettings) else dict(config or {}))
    if given:
        merged = {**loaded.config.teps_settings.model_dump(), **given}
        loaded.config = loaded.config.model_copy(update={"teps_settings": TepsSettings(**merged)})
    return loaded


@dataclass
class TepsParts:
    settings: "TepsSettings"
    registry: "ToolRegistry"
    policy: "PolicyState"
    sandbox: "Sandbox"
    undo: "UndoStore"
    built_sandbox: bool  # built here: the engine removes its runtime folder


def teps_parts(config: "TepsSettings | dict[str, Any] | LoadedConfig | None", workspace: Path, *,
               registry: "ToolRegistry | None", policy: "PolicyState | None", sandbox: "Sandbox | None",
               undo: "UndoStore | None") -> TepsParts:
    """TEPS's parts: those given (the app's wiring gives them all), the rest built here from the config."""
    from framework_core.config.load import LoadedConfig
    from framework_core.config.models import TepsSettings

    if registry is not None and policy is not None and sandbox is not None and undo is not None:
        settings = (config if isinstance(config, TepsSettings) else config.config.teps_settings
                    if isinstance(config, LoadedConfig) else TepsSettings(**(config or {})))
        return TepsParts(settings, registry, policy, sandbox, undo, False)
    loaded = standalone_config(config, workspace)
    return TepsParts(loaded.config.teps_settings,
                     registry if registry is not None else build_registry(loaded),
                     policy if policy is not None else build_policy_state(loaded),
                     sandbox if sandbox is not None else build_sandbox(loaded),
                     undo if undo is not None else build_undo(loaded), sandbox is None)
