"""Start a session: load config, pick or resume the transcript, build the agent, hand over to a front end.

Heavy work (config validation, SDKs, the agent) is imported lazily: the REPL draws its prompt first and
builds the agent in the background (see `ui/boot.py`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from framework_core.config_load import Overrides
from framework_core.errors import ConfigError, MissingApiKeyError
from framework_core.wording import plural

if TYPE_CHECKING:
    from framework_core.config_load import LoadedConfig
    from framework_core.session import MessageManager


@dataclass
class StartOptions:
    overrides: Overrides = field(default_factory=Overrides)
    prompt: str | None = None
    output_format: str = "text"
    continue_latest: bool = False
    resume: str | None = None  # "" = list sessions
    dry_run: bool = False
    no_mcp: bool = False
    fork: bool = False  # with --continue / --resume: a new session starting from that one's history


@dataclass
class Prepared:
    loaded: "LoadedConfig"
    session: "MessageManager"
    warnings: list[str]


def load(opts: StartOptions) -> "LoadedConfig":
    from framework_core.config_load import load_config

    loaded = load_config(Path.cwd(), opts.overrides)
    if opts.dry_run:
        loaded.config.teps_settings.dry_run_enabled = True
    return loaded


def prepare(opts: StartOptions) -> Prepared:
    """Config, key and transcript. Raises ConfigError (MissingApiKeyError included)."""
    from framework_core.tools import spill

    loaded = load(opts)
    check_key(loaded)
    session, warnings = choose_session(loaded, opts)
    teps = loaded.config.teps_settings
    where = spill.session_spill_dir(session.transcript.path) if session.transcript is not None else None
    spill.configure(where, max_bytes=teps.output_max_bytes, session_budget=teps.output_session_max_bytes)
    return Prepared(loaded, session, warnings)


def onboard(opts: StartOptions, exc: MissingApiKeyError, *, interactive: bool) -> bool:
    """Explain what to set; offer a local server that answers. True when the user picked one."""
    from framework_core.ui.onboarding import offer_local_server, onboarding_text

    loaded = load(opts)
    print(onboarding_text(loaded, exc), file=sys.stderr)
    choice = offer_local_server(loaded) if interactive else None
    if choice is None:
        return False
    opts.overrides.provider = choice
    return True


def start(opts: StartOptions) -> int:
    if opts.resume == "":
        print(format_sessions(load(opts)))
        return 0
    if opts.prompt is None:
        from framework_core.ui.repl import run_repl

        return run_repl(opts)
    try:
        prepared = prepare(opts)
    except MissingApiKeyError as exc:
        onboard(opts, exc, interactive=False)
        return 2
    from framework_core.ui.oneshot import run_oneshot

    return run_oneshot(prepared.loaded, prepared.session, opts, prepared.warnings)


def check_key(loaded: "LoadedConfig") -> None:
    from framework_core.config_load import resolve_api_key

    resolve_api_key(loaded.config)


def key_env_vars(loaded: "LoadedConfig") -> list[str]:
    cfg = loaded.config
    names = {p.api_key_env_var for p in cfg.llm_settings.values() if p.api_key_env_var}
    if cfg.api_key_env_var:
        names.add(cfg.api_key_env_var)
    return sorted(names)


def choose_session(loaded: "LoadedConfig", opts: StartOptions) -> tuple["MessageManager", list[str]]:
    from framework_core.config_load import user_data_dir
    from framework_core.session import find_session, latest_session, open_session, resume_session, secrets_in_env
    from framework_core.tools.spill import remove_stale

    data = user_data_dir()
    remove_stale(data)
    mask = secrets_in_env(key_env_vars(loaded))
    path: Path | None = None
    if opts.continue_latest:
        path = latest_session(data, loaded.workspace)
        if path is None:
            raise ConfigError(f"no earlier session for this workspace ({loaded.workspace}); start without --continue")
    elif opts.resume:
        path = find_session(data, opts.resume)
        if path is None:
            raise ConfigError(f"no session '{opts.resume}'. List them with: laca --resume")
    if path is None:
        session = open_session(data, secrets_to_mask=mask)
        session.start({"workspace": str(loaded.workspace), "provider": loaded.config.llm_provider,
                       "persona": loaded.config.default_persona, "pid": os.getpid()})
        return session, [session.memory_only] if session.memory_only else []
    session, loaded_session = resume_session(data, path, mask, fork=opts.fork)
    session.record({"type": "resumed", "pid": os.getpid(), "messages": len(loaded_session.messages)})
    verb = f"Forked session {path.stem} into {session.session_id}" if opts.fork else f"Resumed session {path.stem}"
    notes = [session.memory_only] if session.memory_only else []
    return session, loaded_session.warnings + notes + [f"{verb} ({plural(len(session.messages), 'message')})."]


def format_sessions(loaded: "LoadedConfig") -> str:
    import time

    from framework_core.config_load import user_data_dir
    from framework_core.session import list_sessions

    rows = list_sessions(user_data_dir(), loaded.workspace)
    if not rows:
        return f"No sessions yet for {loaded.workspace}."
    lines = [f"Sessions for {loaded.workspace} (newest first); resume with: laca --resume ID"]
    for s in rows[:30]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated))
        lines.append(f"  {s.session_id}  {when}  {s.messages:>4} msgs  {s.preview}")
    return "\n".join(lines)
