"""DynamicContextManager (seed 001 §3.4): parses FRAMEWORK_CONTEXT.md, loads documents and personas,
builds the system prompt.

Syntax: `## Section` headers; `doc_id: @./relative/path.md` lines (relative to the context file, list
bullets allowed); `# initial_prompt_template: "text"`. A missing document is a warning, not a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from framework_core.errors import ConfigError

DOC_LINE = re.compile(r"^\s*(?:[-*]\s+)?([A-Za-z0-9_.\-]+)\s*:\s*@(\S+)\s*$")
TEMPLATE_LINE = re.compile(r'^#\s*initial_prompt_template\s*:\s*"(.*)"\s*$')
SECTION_LINE = re.compile(r"^##\s+(.+?)\s*$")
TOOLS_BLOCK = """\
## Tools and permissions
You can call tools. Every tool call MUST include `icerc_full_text`: a brief with these labelled parts:
Intent, Command (the exact command or action), Expected outcome, Risk assessment, Confirmation request.
The user sees that brief next to the exact action and decides. Read-only commands run without asking;
others ask; dangerous ones are blocked. If a call is declined, do not retry it unchanged: read the
user's reason, adjust, or ask. Tool results are JSON with a `status` field."""


@dataclass
class LoadedDocument:
    doc_id: str
    section: str
    source: Path
    kind: str  # "persona" | "document" | "agents_md"
    content: str

    @property
    def size(self) -> int:
        return len(self.content)

    @property
    def approx_tokens(self) -> int:
        return len(self.content) // 4


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


class DynamicContextManager:
    def __init__(self, context_definition_file_path: str, *, workspace: Path | None = None,
                 agents_md_max_bytes: int = 64_000) -> None:
        self.path = Path(context_definition_file_path).expanduser().resolve()
        self.workspace = workspace
        self.agents_md_max_bytes = agents_md_max_bytes
        self.warnings: list[str] = []
        self._docs: dict[str, LoadedDocument] = {}
        self._template: str | None = None
        self._prompt_cache: dict[str | None, str] = {}
        self._load()

    # -- loading ------------------------------------------------------------------------------
    def _load(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            self.warnings.append(f"context file {self.path} could not be read ({exc.strerror}); "
                                 "continuing without framework context")
            text = ""
        base = self.path.parent
        section = ""
        for line in text.splitlines():
            m = SECTION_LINE.match(line)
            if m:
                section = m.group(1)
                continue
            m = TEMPLATE_LINE.match(line)
            if m:
                self._template = _unescape(m.group(1))
                continue
            m = DOC_LINE.match(line)
            if m:
                self._add(m.group(1), section, base / m.group(2))
        for persona_file in sorted((base / "personas").glob("*.md")):
            doc_id = persona_file.stem
            if doc_id not in self._docs:
                self._add(doc_id, "Personas", persona_file)
        self._load_agents_md()

    def _add(self, doc_id: str, section: str, path: Path) -> None:
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.warnings.append(f"context document '{doc_id}' not loaded: {path} ({exc.strerror or exc})")
            return
        kind = "persona" if "persona" in section.lower() else "document"
        self._docs[doc_id] = LoadedDocument(doc_id, section, path.resolve(), kind, content)

    def _load_agents_md(self) -> None:
        if self.workspace is None:
            return
        path = self.workspace / "AGENTS.md"
        if not path.is_file():
            return
        data = path.read_bytes()
        content = data[: self.agents_md_max_bytes].decode("utf-8", errors="replace")
        if len(data) > self.agents_md_max_bytes:
            content += f"\n[… AGENTS.md truncated at {self.agents_md_max_bytes:,} of {len(data):,} bytes]"
            self.warnings.append(f"AGENTS.md is {len(data):,} bytes; only the first {self.agents_md_max_bytes:,} are used")
        self._docs["AGENTS.md"] = LoadedDocument("AGENTS.md", "Workspace instructions", path, "agents_md", content)

    # -- the seed's interface -----------------------------------------------------------------
    def get_full_initial_context(self) -> dict[str, str]:
        return {d.doc_id: d.content for d in self._docs.values()}

    def get_document_content(self, doc_id: str) -> str | None:
        doc = self._docs.get(doc_id)
        return doc.content if doc else None

    def get_persona_definitions(self) -> dict[str, str]:
        return {d.doc_id: d.content for d in self._docs.values() if d.kind == "persona"}

    def get_initial_prompt_template(self) -> str | None:
        return self._template

    # -- additions ----------------------------------------------------------------------------
    def documents(self) -> list[LoadedDocument]:
        return list(self._docs.values())

    def persona_ids(self) -> list[str]:
        return [d.doc_id for d in self._docs.values() if d.kind == "persona"]

    def build_system_prompt(self, persona_id: str | None) -> str:
        if persona_id in self._prompt_cache:
            return self._prompt_cache[persona_id]
        personas = self.get_persona_definitions()
        parts: list[str] = []
        if persona_id is not None:
            if persona_id not in personas:
                valid = ", ".join(personas) or "(none loaded)"
                raise ConfigError(f"Unknown persona '{persona_id}'. Valid personas: {valid}")
            parts.append(personas[persona_id].strip())
        if self._template:
            parts.append(self._template.strip())
        section = None
        for doc in self._docs.values():
            if doc.kind != "document":
                continue
            if doc.section != section:
                section = doc.section
                parts.append(f"# {section}")
            parts.append(doc.content.strip())
        agents = self._docs.get("AGENTS.md")
        if agents is not None:
            parts.append("# Workspace instructions (AGENTS.md)\n" + agents.content.strip())
        parts.append(TOOLS_BLOCK)
        prompt = "\n\n".join(p for p in parts if p)
        self._prompt_cache[persona_id] = prompt
        return prompt
