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

from framework_core.core.options import StartOptions
from framework_core.errors import ConfigError, LacaError, MissingApiKeyError
from framework_core.wording import plural

if TYPE_CHECKING:
    from typing import Any, Callable

    from framework_core.config.load import LoadedConfig
    from framework_core.core.approval import Approver
    from framework_core.core.events import EventSink
    from framework_core.core.facade import Facade
    from framework_core.ui.boot import Started
    from framework_core.core.session import MessageManager


@dataclass
class Prepared:
    loaded: "LoadedConfig"
    session: "MessageManager"
    warnings: list[str]
    resumed: dict = field(default_factory=dict)  # the resumed session's last provider, model and persona
    recap: list[str] = field(default_factory=list)  # its last exchange, shown when it opens


def load(opts: StartOptions, *, lenient: bool = False) -> "LoadedConfig":
    from framework_core.config.load import load_config

    loaded = load_config(Path.cwd(), opts.overrides, lenient=lenient)
    if opts.dry_run:
        loaded.config.teps_settings.dry_run_enabled = True
    return loaded


def prepare(opts: StartOptions, *, require_key: bool = True, lenient: bool = False) -> Prepared:
    """Config, provider, key and transcript. Raises ConfigError (MissingApiKeyError included, unless
    `require_key` is False: the REPL opens without a key and says what to set)."""
    from framework_core.tools import spill

    from framework_core.config.json_store import take_reports

    from framework_core.app.local_server import ensure_started

    loaded = load(opts, lenient=lenient)  # the REPL starts without a broken file of yours; -p stops on it (exit 2)
    notes = take_reports() + list(loaded.ignored) + pick_provider(loaded)  # what was moved aside or left out: first
    ensure_started(loaded)  # `serve:` (--provider local): llama.cpp's server with a packaged model, for the session
    try:
        check_key(loaded)
    except MissingApiKeyError as exc:
        if require_key:
            raise
        from framework_core.ui.onboarding import onboarding_text

        notes.append(onboarding_text(loaded, exc, repl=True))
    session, warnings, resumed = choose_session(loaded, opts)
    teps = loaded.config.teps_settings
    where = spill.session_spill_dir(session.transcript.path) if session.transcript is not None else None
    spill.configure(where, max_bytes=teps.output_max_bytes, session_budget=teps.output_session_max_bytes)
    from framework_core.core.session import recap

    return Prepared(loaded, session, notes + warnings, resumed, recap(session) if resumed else [])


def user_chose_provider(loaded: "LoadedConfig") -> bool:
    """The provider was named by the user (their config, the workspace's, LACA_PROVIDER, --config or a flag),
    not taken from the shipped defaults."""
    return not loaded.source_of(("llm_provider",)).startswith(("framework", "default"))


def keyed_providers(loaded: "LoadedConfig") -> list[str]:
    """Providers whose API key is set in the environment, in the config's order."""
    return [name for name, p in loaded.config.llm_settings.items()
            if p.api_key_env_var and os.environ.get(p.api_key_env_var, "").strip()]


def pick_provider(loaded: "LoadedConfig") -> list[str]:
    """When the user named no provider and the default one has no key, use the provider whose key is set
    (the first of several, saying which others could be picked). Returns what to tell the user."""
    cfg = loaded.config
    if user_chose_provider(loaded):
        return []
    var = cfg.api_key_env(cfg.llm_provider)
    if not var or os.environ.get(var, "").strip():
        return []
    keyed = keyed_providers(loaded)
    if not keyed:
        return []
    cfg.llm_provider = keyed[0]
    chosen_var = cfg.api_key_env(keyed[0])
    others = f"; {', '.join(keyed[1:])} could be used too (/provider NAME switches)" if keyed[1:] else ""
    return [f"Using {keyed[0]}: {chosen_var} is set and {var} is not{others}. Make it permanent with "
            f"llm_provider: {keyed[0]} in ~/.config/laca/config.yaml."]


def several_keys_question(opts: StartOptions) -> list[str]:
    """Providers to choose between before the REPL starts: several keys set, none for the default provider,
    and no provider named by the user. Cheap when that cannot be the case (no config is read)."""
    if opts.overrides.provider or os.environ.get("LACA_PROVIDER"):
        return []
    if sum(1 for k, v in os.environ.items() if k.endswith("_API_KEY") and v.strip()) < 2:
        return []
    try:
        loaded = load(opts)
    except ConfigError:
        return []  # the start reports it
    if user_chose_provider(loaded):
        return []
    var = loaded.config.api_key_env(loaded.config.llm_provider)
    if not var or os.environ.get(var, "").strip():
        return []
    keyed = keyed_providers(loaded)
    return keyed if len(keyed) > 1 else []


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
        loaded = load(opts)
        if opts.prompt is not None or not sys.stdin.isatty():
            from framework_core.ui.sessions_view import format_sessions

            print(format_sessions(loaded.workspace))
            return 0
        from framework_core.ui.sessions_view import pick_session

        picked = pick_session(loaded.workspace)
        if picked is None:
            return 0
        opts.resume = picked
    if opts.prompt is None:
        from framework_core.ui.repl import run_repl

        return run_repl(opts, AppLauncher())
    try:
        return one_shot(opts)
    except LacaError as exc:
        if opts.output_format != "text":  # JSON was asked for: the failure is JSON too (and said on stderr)
            from framework_core.ui.headless import error_result

            error_result(str(exc), fmt=opts.output_format, exit_code=exc.exit_code)
        raise


def one_shot(opts: StartOptions) -> int:
    from framework_core.ui.oneshot import run_oneshot

    try:
        return run_oneshot(opts, AppLauncher(one_shot=True))
    except MissingApiKeyError as exc:
        onboard(opts, exc, interactive=False)
        if opts.output_format != "text":
            from framework_core.ui.headless import error_result

            error_result(str(exc), fmt=opts.output_format, exit_code=exc.exit_code)
        return exc.exit_code


class AppLauncher:
    """What the front ends ask of the app layer (`ui/boot.py`'s Launcher): the only place a session is built."""

    def __init__(self, *, one_shot: bool = False) -> None:
        self.one_shot = one_shot

    def start_session(self, opts: StartOptions, *, events: "EventSink", approver: "Approver",
                      elicit: "Callable[[Any], Any] | None" = None, require_key: bool = True) -> "Started":
        from framework_core.app.wiring import build_agent
        from framework_core.ui.boot import Started

        prepared = prepare(opts, require_key=require_key, lenient=not self.one_shot)
        skipped = prepared.loaded.trust.skipped_line(prepared.loaded.workspace) if self.one_shot else None
        parts = build_agent(prepared.loaded, events=events, approver=approver, session=prepared.session,
                            start_mcp=not opts.no_mcp, elicit=elicit)
        notes: list[Any] = prepared.warnings + ([skipped] if skipped else []) + parts.facade.undo_notices()
        notes += apply_run_options(parts.facade, opts, prepared.resumed)
        if not self.one_shot:  # -p prints only the answer on stdout; the REPL shows where the session left off
            notes += [(line, "laca.dim") for line in prepared.recap]
        return Started(parts.facade, notes)

    def providers_to_ask(self, opts: StartOptions) -> list[str]:
        return several_keys_question(opts)

    def onboard(self, opts: StartOptions, error: MissingApiKeyError, *, interactive: bool) -> bool:
        return onboard(opts, error, interactive=interactive)


def check_key(loaded: "LoadedConfig") -> None:
    from framework_core.config.load import resolve_api_key

    resolve_api_key(loaded.config)


def choose_session(loaded: "LoadedConfig", opts: StartOptions) -> tuple["MessageManager", list[str], dict]:
    """(the session, what to say about it, the resumed session's meta: empty for a new one)."""
    from framework_core.app.wiring import key_env_vars
    from framework_core.config.dirs import user_data_dir
    from framework_core.core.session import (find_session_by_prefix, latest_session, open_session, resume_session,
                                             secrets_in_env)
    from framework_core.tools.spill import remove_stale

    data = user_data_dir()
    remove_stale(data)
    mask = secrets_in_env(key_env_vars(loaded))
    path: Path | None = None
    notes: list[str] = []
    if opts.continue_latest:
        path = latest_session(data, loaded.workspace)
        if path is None:
            from framework_core.core.session import damaged_transcripts

            damaged = damaged_transcripts(data)
            notes.append(f"No earlier session for {loaded.workspace} could be read: starting a new one."
                         + (f" {len(damaged)} session transcript(s) are damaged (not JSON records: they cannot be "
                            f"continued, and are left as they are): {', '.join(str(p) for p in damaged[:3])}"
                            f"{' …' if len(damaged) > 3 else ''}." if damaged else ""))
    elif opts.resume:
        path = find_session_by_prefix(data, opts.resume)
    if path is None:
        session = open_session(data, secrets_to_mask=mask)
        cfg = loaded.config
        session.start({"workspace": str(loaded.workspace), "provider": cfg.llm_provider,
                       "model": cfg.llm_settings[cfg.llm_provider].model if cfg.llm_provider in cfg.llm_settings
                       else None, "persona": cfg.default_persona, "pid": os.getpid()})
        return session, notes + ([session.memory_only] if session.memory_only else []), {}
    session, loaded_session = resume_session(data, path, mask, fork=opts.fork)
    session.record({"type": "resumed", "pid": os.getpid(), "messages": len(loaded_session.messages)})
    verb = f"Forked session {path.stem} into {session.session_id}" if opts.fork else f"Resumed session {path.stem}"
    notes += [session.memory_only] if session.memory_only else []
    notes += loaded_session.warnings + [f"{verb} ({plural(len(session.messages), 'message')})."]
    meta = dict(loaded_session.meta)
    if opts.fork:
        meta.pop("grants", None)  # grants belong to the session they were given in, not to a fork of it
    return session, notes, meta


MODE_ALIASES = {"default": "ask", "acceptEdits": "accept-edits"}  # Claude Code's names for the same modes


def allow_rules(patterns: list[str]):  # -> list[Rule]
    """`--allow PATTERN` as a rule file's allowlist line: a command prefix (`pytest`, `npm run test`), or
    `tool:NAME` (with * in names) for a tool; Claude Code's `Bash(npm run test:*)` is read as that prefix."""
    import re
    import shlex

    from framework_core.policy.rules import Rule

    rules = []
    for pattern in patterns:
        text = pattern.strip()
        claude = re.fullmatch(r"Bash\((.+?)(?::\*)?\)", text)
        if claude:
            text = claude.group(1)
        if text.startswith("tool:") and text[5:].strip():
            rules.append(Rule(f"--allow {pattern}", "allow", "--allow", tool=text[5:].strip()))
            continue
        try:
            words = tuple(shlex.split(text))
        except ValueError as exc:
            raise ConfigError(f"--allow '{pattern}': {exc}") from None
        if not words:
            raise ConfigError("--allow needs a pattern: a command prefix such as 'pytest', or tool:NAME")
        rules.append(Rule(f"--allow {pattern}", "allow", "--allow", prefix=words))
    return rules


def apply_run_options(facade: "Facade", opts: StartOptions, resumed: dict) -> list[str]:
    """What the command line and a resumed session add once the agent exists: --allow rules, the mode, and
    (unless a flag says otherwise) the resumed session's provider, model and persona. Returns notes."""
    notes: list[str] = []
    if opts.allow:
        facade.add_rules(allow_rules(opts.allow))
        notes.append("Allowed for this run: " + ", ".join(opts.allow))
    if opts.permission_mode:
        facade.set_mode(MODE_ALIASES.get(opts.permission_mode, opts.permission_mode))
        if facade.mode == "auto" and not facade.auto_ready:
            notes.append("auto mode: the sandbox here is not complete (it needs bubblewrap, the workspace-write "
                         "profile, an overlay, and a workspace that is not the home folder), so commands ask")
    if resumed:
        notes += restore_resumed(facade, opts, resumed)
    return notes


def restore_resumed(facade: "Facade", opts: StartOptions, meta: dict) -> list[str]:
    """--continue / --resume go on with the provider, model and persona the session last used (a flag wins)."""
    ov = opts.overrides
    return facade.adopt(meta, persona=not ov.persona, provider=not ov.provider, model=not ov.model)
