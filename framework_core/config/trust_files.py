"""A workspace's own addition files, read once.

What the trust question shows, what the trust record's digest is taken of, and what the session then uses are
the same text: `.mcp.json`, `tools.yaml`, `.laca/rules.yaml` and the workspace's `framework_config.yaml` are
read here once, and the question (REPL), the config load, the trust decision and the wiring (servers, tools,
rules) all parse that text, never the file again. The digests of the files a trusted item runs (its scripts:
framework_core/config/trust_runs.py) are taken once per file too, so the question and the record agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from framework_core.errors import ConfigError

MCP_JSON = ".mcp.json"
TOOLS = "tools.yaml"
RULES = ".laca/rules.yaml"
CONFIG = "framework_config.yaml"
NAMES = (MCP_JSON, TOOLS, RULES, CONFIG)
WHAT = {MCP_JSON: ".mcp.json", TOOLS: "tools file", RULES: "rule file", CONFIG: "config file"}


@dataclass
class WorkspaceFiles:
    workspace: Path
    texts: dict[str, str | None] = field(default_factory=dict)  # name -> text; None: not there
    errors: dict[str, ConfigError] = field(default_factory=dict)  # name -> why it could not be read
    digests: dict[Path, str | None] = field(default_factory=dict)  # a file a trusted item runs -> its digest

    @classmethod
    def read(cls, workspace: Path) -> "WorkspaceFiles":
        from framework_core.config.yaml_load import read_text

        ws = workspace.resolve()
        out = cls(ws)
        for name in NAMES:
            path = ws / name
            if not path.is_file() and not path.is_fifo():
                out.texts[name] = None
                continue
            try:
                out.texts[name] = read_text(path, what=WHAT[name])
            except ConfigError as exc:
                out.texts[name] = None
                out.errors[name] = exc
        return out

    def path(self, name: str) -> Path:
        return self.workspace / name

    def has(self, name: str) -> bool:
        return self.texts.get(name) is not None or name in self.errors

    def text(self, name: str) -> str | None:
        """The text as read; None when the file is not there. Raises the ConfigError of a file that could not
        be read (a FIFO, too large, not UTF-8), naming it."""
        if name in self.errors:
            raise self.errors[name]
        return self.texts.get(name)

    def file_digest(self, path: Path) -> str | None:
        from framework_core.config.trust_runs import file_digest

        if path not in self.digests:
            self.digests[path] = file_digest(path)
        return self.digests[path]

    def for_workspace(self, workspace: Path) -> bool:
        return self.workspace == workspace.resolve()
