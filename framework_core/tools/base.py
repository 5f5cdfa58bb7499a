"""A tool is data: name, description, JSON schema, handler. One registry serves built-in, declared and MCP tools."""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from framework_core.lial_core import ICERC_DESCRIPTION, ICERC_FIELD, ToolSchema
from framework_core.policy.kinds import Permission, ToolKind
from framework_core.tools.read_record import ReadRecord

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from framework_core.config.models import TepsSettings
    from framework_core.sandbox.sandbox import Sandbox
    from framework_core.sandbox.changeset import ChangeSet
    from framework_core.sandbox.undo_store import UndoStore
    from framework_core.tools.result_budget import Saver



@dataclass
class ActionPreview:
    """The truth about a call, taken from its arguments (the ICERC brief is only the model's claim)."""

    title: str  # "Run command", "Write file src/app.py", "Call git_status on server git"
    body: str = ""  # the command, the diff, the pretty arguments
    lexer: str | None = None  # "bash", "diff", "json", or None for plain text
    notes: list[str] = field(default_factory=list)  # e.g. "path is outside the workspace"
    path: str | None = None  # resolved absolute path for file tools
    inside_workspace: bool = True
    full_body: str | None = None  # the unfolded body, when `body` folds long values
    saved_output: bool = False  # a file tool's path is one of this session's saved outputs (LACA wrote it)
    paths: list[str] = field(default_factory=list)  # every file a write changes, when more than `path` (a patch)


@dataclass(frozen=True)
class CallScope:
    """What the policy's decision and the user's answer allow one call's process: set by TEPS per call."""

    writes: bool = False  # the workspace is writable (the call was approved or allowed, not merely Safe)
    network: bool = False  # the policy says it uses the network and the user approved it (or a rule did)
    unsandboxed: bool = False  # the user chose to run this one call outside the sandbox
    preview: bool = False  # run in the overlay, show the change set, apply only if the user says so
    hold: bool = False  # auto mode ran it: a change set holding what runs with nothing named is asked about first


@dataclass
class ToolContext:
    """What a handler may use. Handlers never print; streamed output goes through `on_output`."""

    workspace: Path
    settings: "TepsSettings"
    env: dict[str, str]
    on_output: Callable[[str], None] | None = None
    undo: "UndoStore | None" = None  # where writes save what they replace, for /undo
    withheld_env: tuple[str, ...] = ()
    sandbox: "Sandbox | None" = None  # None: processes run unconfined (tests of pure handlers)
    scope: CallScope = field(default_factory=CallScope)
    review: "Callable[[ChangeSet], bool] | None" = None  # asks the user whether to apply a previewed change set
    #: The session's own folder for cut outputs; readFile may read the files in it (and nothing else outside
    #: the workspace) without asking. None: the runner's default folder.
    outputs_dir: Path | None = None
    context_window: Callable[[], int | None] = lambda: None  # the active model's window, in tokens
    #: What the model has read (and written) of each file in this session, for the edit tools' stale check.
    reads: ReadRecord = field(default_factory=ReadRecord)

    def result_budget(self) -> int:
        """Characters one result may send the model: the configured budget, smaller for a small window."""
        from framework_core.tools.result_budget import budget_for_window

        return budget_for_window(self.settings.output_budget_chars, self.context_window())

    def output_folder(self) -> Path | None:
        """Where cut results are saved for paging: the session's folder (the runner's default without one)."""
        from framework_core.tools import spill

        return self.outputs_dir or spill.default_limits().spill_dir

    def saver(self, prefix: str) -> "Saver | None":
        """Saves the whole of a cut result in the output folder, for a follow-up readFile."""
        from framework_core.tools.result_budget import saver

        folder = self.output_folder()
        return saver(folder, prefix) if folder is not None else None

    def saved_output(self, path: Path) -> bool:
        """Whether `path` (resolved) names a file of the session's saved outputs."""
        folder = self.output_folder()
        return folder is not None and path.parent == Path(os.path.realpath(folder))


#: A handler returns the result's `data` dict, or raises ToolError / ToolArgumentError.
Handler = Callable[[dict[str, Any], ToolContext], dict[str, Any]]
Previewer = Callable[[dict[str, Any], ToolContext], ActionPreview]


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of type object, without the ICERC field
    handler: Handler
    source: str = "builtin"  # "builtin" | "declared:<file>" | "mcp:<server>"
    kind: ToolKind = "generic"
    permission: Permission | None = None  # None: the policy's default for this kind
    preview: Previewer | None = None
    server: str | None = None  # MCP server name, for prompts and grants
    remote_name: str | None = None  # the tool's own name on its server
    network: bool = False  # a declared CLI tool that needs the network in the sandbox
    runs_process: bool = False  # starts a process (bash, declared CLI tools): runs in the sandbox

    def llm_schema(self) -> ToolSchema:
        """The schema offered to the model: ours plus a required `icerc_full_text`."""
        params = dict(self.parameters or {"type": "object", "properties": {}})
        props = dict(params.get("properties") or {})
        props[ICERC_FIELD] = {"type": "string", "description": ICERC_DESCRIPTION}
        required = [r for r in params.get("required") or [] if r != ICERC_FIELD] + [ICERC_FIELD]
        params.update({"type": "object", "properties": props, "required": required})
        return ToolSchema(self.name, self.description, params)

    @functools.cached_property
    def validator(self) -> "Validator":
        """The schema the model sees, compiled once. The ICERC brief is not required here: a call without one
        still runs, its approval panel saying the brief is missing. Raises SchemaProblem for a broken schema."""
        from framework_core.tools.arguments import compile_schema

        schema = dict(self.llm_schema().parameters)
        schema["required"] = [r for r in schema["required"] if r != ICERC_FIELD]
        return compile_schema(schema)

    def check_arguments(self, args: dict[str, Any]) -> None:
        """Raise ToolArgumentError naming each argument that does not fit the schema the model sees."""
        from framework_core.tools.arguments import check

        check(self.validator, args)

    def make_preview(self, args: dict[str, Any], ctx: ToolContext) -> ActionPreview:
        if self.preview is not None:
            return self.preview(args, ctx)
        import json

        where = f" from server {self.server}" if self.server else ""
        full = json.dumps(args, indent=2, ensure_ascii=False)
        folded = json.dumps(fold_values(args), indent=2, ensure_ascii=False)
        return ActionPreview(title=f"Run {self.remote_name or self.name}{where}", body=folded, lexer="json",
                             full_body=full if folded != full else None)


FOLD_AT = 300


def fold_values(value: Any) -> Any:
    """Shorten long strings inside arguments for display, saying how much was left out."""
    if isinstance(value, str) and len(value) > FOLD_AT:
        return value[:FOLD_AT] + f"… [{len(value) - FOLD_AT:,} more characters: press v to view all]"
    if isinstance(value, dict):
        return {k: fold_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fold_values(v) for v in value]
    return value


class ToolRegistry:
    """Name -> ToolSpec. Thread-safe: MCP servers register their tools from a background thread."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._lock = threading.Lock()

    def register(self, spec: ToolSpec, *, replace: bool = False) -> None:
        with self._lock:
            if spec.name in self._tools and not replace:
                raise ValueError(f"tool '{spec.name}' is already registered (from {self._tools[spec.name].source})")
            self._tools[spec.name] = spec

    def unregister_source(self, source: str) -> None:
        with self._lock:
            for name in [n for n, s in self._tools.items() if s.source == source]:
                del self._tools[name]

    def get(self, name: str) -> ToolSpec | None:
        with self._lock:
            return self._tools.get(name)

    def all(self) -> list[ToolSpec]:
        with self._lock:
            return list(self._tools.values())

    def schemas(self) -> list[ToolSchema]:
        return [t.llm_schema() for t in self.all() if t.permission != "never"]

    def __contains__(self, name: object) -> bool:
        return self.get(str(name)) is not None

    def __len__(self) -> int:
        return len(self.all())
