"""DynamicContextManager: parses FRAMEWORK_CONTEXT.md, loads documents and personas,
builds the system prompt.

Syntax: `## Section` headers; `doc_id: @./relative/path.md` lines (relative to the context file, list
bullets allowed); `# initial_prompt_template: "text"`. A missing document is a warning, not a crash.

Everything read here goes into the system prompt sent to the provider, and a context file may come with a
cloned repository. So a document must be a regular text file inside an allowed root (the workspace, the
folder of the defaults LACA ships, or the folder of a context file the user's own config names), under a
size cap (cut with a note); FIFOs, devices, binaries and paths that resolve elsewhere are skipped with a
one-line warning.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from framework_core.errors import ConfigError
from framework_core.config.shipped import shipped_dir

DOC_LINE = re.compile(r"^\s*(?:[-*]\s+)?([A-Za-z0-9_.\-]+)\s*:\s*@(\S+)\s*$")
TEMPLATE_LINE = re.compile(r'^#\s*initial_prompt_template\s*:\s*"(.*)"\s*$')
SECTION_LINE = re.compile(r"^##\s+(.+?)\s*$")
DOC_MAX_BYTES = 100_000  # one document; a longer one is cut with a note
CONTEXT_FILE_MAX_BYTES = 200_000
TOOLS_BLOCK = """\
## Tools and permissions
Every tool call MUST fill `icerc_full_text` with this brief, one labelled line each:
Intent: why the call is needed for the user's goal.
Command: the exact command or action (the literal command line, path or arguments).
Expected outcome: what you expect to see or change.
Risk assessment: what could go wrong and how bad ("low: read-only" when so).
Confirmation request: a one-line question asking the user to approve.
The user sees the brief next to the exact action LACA reads from your arguments; a brief that misdescribes
the action is a serious fault. Read-only calls run without asking; others ask; dangerous ones are blocked.
If a call is declined, do not retry it unchanged: read the user's reason, adjust, or ask."""


#: The system prompt of a small model (a profile's `small_model`): the template, the workspace's instructions and
#: this, without the persona and the standards (a 135M-parameter model loses the question in a long prompt).
SMALL_TOOLS_BLOCK = """\
You can use tools in the user's workspace. Every tool call fills `icerc_full_text` with one short line for the
user: what the call does and why. Read-only calls run at once; others ask the user. Do not repeat a call that
was declined or failed."""


WORKSPACE_INSTRUCTIONS = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")  # read in this order when present


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
        from framework_core.estimate import text_tokens

        return text_tokens(self.content)


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


IMPORT_DEPTH = 5  # Claude Code's limit on nested `@path` imports
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:\./|\.\./|[\w-])[^\s`'\"]*)")


def follow_imports(text: str, path: Path, workspace: Path, budget: int,
                   seen: set[Path] | None = None, depth: int = 0) -> tuple[str, list[str]]:
    """CLAUDE.md's `@path` imports (relative to the importing file; outside code spans and fenced blocks)
    appended after `text`, each file once, `IMPORT_DEPTH` levels deep, inside the workspace only, within
    `budget` bytes in all. Returns the text and notes for imports left out."""
    seen = seen if seen is not None else {Path(os.path.realpath(path))}
    parts, notes, fenced = [text], [], False
    root = Path(os.path.realpath(workspace))
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced:
            continue
        for found in _IMPORT.findall(re.sub(r"`[^`]*`", "", line)):
            ref = found.rstrip(".,;:)")
            target = Path(os.path.realpath(path.parent / ref))
            if target in seen or not target.is_file():
                continue
            seen.add(target)
            if depth + 1 > IMPORT_DEPTH:
                notes.append(f"@{ref} in {path.name} not imported: imports go {IMPORT_DEPTH} levels deep")
                continue
            left = budget - sum(len(p) for p in parts)
            if left <= 0:
                notes.append(f"@{ref} in {path.name} not imported: the instructions reached their size limit")
                continue
            try:
                body, _size = read_text_document(target, [root], max(0, left))
            except DocumentSkipped as exc:
                notes.append(f"@{ref} in {path.name} not imported: {exc}")
                continue
            body, more = follow_imports(body, target, workspace, left, seen, depth + 1)
            notes += more
            parts.append(f"\n\n[imported from {target.relative_to(root)}]\n{body}")
    return "".join(parts), notes


class DocumentSkipped(Exception):
    """A document that is not read, with the reason in plain words."""


def read_text_document(path: Path, roots: Sequence[Path], max_bytes: int) -> tuple[str, int]:
    """A regular UTF-8 text file inside one of `roots`, cut to `max_bytes`. Returns (text, full size).
    Raises DocumentSkipped saying why not; never blocks (a FIFO is opened without waiting for a writer)."""
    real = Path(os.path.realpath(path))
    if not any(real == r or real.is_relative_to(r) for r in roots):
        where = " or ".join(str(r) for r in roots)
        raise DocumentSkipped(f"{real} is outside {where}")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise DocumentSkipped(f"{path} ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DocumentSkipped(f"{real} is not a regular file")
        data = os.read(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if b"\0" in data[:8192]:
        raise DocumentSkipped(f"{real} is a binary file, not text")
    try:
        text = data[:max_bytes].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < max_bytes - 4:  # not just a character cut in two by the cap
            raise DocumentSkipped(f"{real} is not UTF-8 text") from None
        text = data[: exc.start].decode("utf-8")
    return text, info.st_size


class DynamicContextManager:
    def __init__(self, context_definition_file_path: str, *, workspace: Path | None = None,
                 agents_md_max_bytes: int = 64_000, roots: Sequence[Path] | None = None) -> None:
        """`roots`: where documents may live. By default the workspace, the shipped defaults and the context
        file's own folder; a context file a workspace brings gets only the first two (see wiring)."""
        self.path = Path(context_definition_file_path).expanduser().resolve()
        self.workspace = workspace
        self.agents_md_max_bytes = agents_md_max_bytes
        default = [shipped_dir(), self.path.parent] + ([workspace] if workspace is not None else [])
        self.roots = list(dict.fromkeys(Path(os.path.realpath(r)) for r in (roots if roots is not None else default)))
        self.warnings: list[str] = []
        self.context_problem: str | None = None  # why the context file itself could not be used
        self._docs: dict[str, LoadedDocument] = {}
        self._template: str | None = None
        self._prompt_cache: dict[str | None, str] = {}
        self._load()

    # -- loading ------------------------------------------------------------------------------
    def _load(self) -> None:
        try:
            text, _ = read_text_document(self.path, self.roots, CONTEXT_FILE_MAX_BYTES)
        except DocumentSkipped as exc:
            self.context_problem = f"the context file could not be used: {exc}"
            self.warnings.append(f"{self.context_problem}; continuing without framework context")
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
                self._add(m.group(1), section, base / os.path.expanduser(m.group(2)))
        personas = base / "personas"
        if not self.context_problem and personas.is_dir():
            for persona_file in sorted(personas.glob("*.md")):
                doc_id = persona_file.stem
                if doc_id not in self._docs:
                    self._add(doc_id, "Personas", persona_file)
        self._load_agents_md()

    def _add(self, doc_id: str, section: str, path: Path) -> None:
        try:
            content, size = read_text_document(path, self.roots, DOC_MAX_BYTES)
        except DocumentSkipped as exc:
            self.warnings.append(f"context document '{doc_id}' skipped: {exc}")
            return
        if size > DOC_MAX_BYTES:
            content += f"\n[… '{doc_id}' cut at {DOC_MAX_BYTES:,} of {size:,} bytes]"
            self.warnings.append(f"context document '{doc_id}' is {size:,} bytes; "
                                 f"only the first {DOC_MAX_BYTES:,} are used")
        kind = "persona" if "persona" in section.lower() else "document"
        self._docs[doc_id] = LoadedDocument(doc_id, section, Path(os.path.realpath(path)), kind, content)

    def _load_agents_md(self) -> None:
        """The workspace's instructions for agents: AGENTS.md, and CLAUDE.md and GEMINI.md (written for the
        peers' agents) when present; one whose text repeats an earlier one is left out."""
        if self.workspace is None:
            return
        seen: set[str] = set()
        for name in WORKSPACE_INSTRUCTIONS:
            path = self.workspace / name
            if not path.exists():
                continue
            try:
                content, size = read_text_document(path, [Path(os.path.realpath(self.workspace))],
                                                   self.agents_md_max_bytes)
            except DocumentSkipped as exc:
                self.warnings.append(f"{name} skipped: {exc}")
                continue
            if content.strip() in seen:
                continue
            seen.add(content.strip())
            content, notes = follow_imports(content, path, self.workspace, self.agents_md_max_bytes)
            self.warnings += notes
            if size > self.agents_md_max_bytes:
                content += f"\n[… {name} truncated at {self.agents_md_max_bytes:,} of {size:,} bytes]"
                self.warnings.append(f"{name} is {size:,} bytes; only the first {self.agents_md_max_bytes:,} are used")
            self._docs[name] = LoadedDocument(name, "Workspace instructions", path, "agents_md", content)

    def reload_workspace_instructions(self) -> None:
        """Read AGENTS.md (and CLAUDE.md, GEMINI.md) again, after /init wrote one."""
        self._docs = {k: d for k, d in self._docs.items() if d.kind != "agents_md"}
        self._load_agents_md()
        self._prompt_cache.clear()

    def unknown_persona(self, persona_id: str) -> ConfigError:
        """The error for a persona that is not loaded, naming the real cause first."""
        valid = ", ".join(self.persona_ids()) or "(none loaded)"
        if self.context_problem:
            return ConfigError(f"{self.context_problem}, so persona '{persona_id}' is not defined. Fix "
                               "context_definition_file (or LACA_CONTEXT_FILE)", key="context_definition_file")
        return ConfigError(f"Unknown persona '{persona_id}'. Valid personas: {valid}", key="default_persona")

    # -- the stable interface (docs/ARCHITECTURE.md) ------------------------------------------
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

    def build_system_prompt(self, persona_id: str | None, *, small: bool = False) -> str:
        """The persona, the template, the documents, the workspace's instructions and the tool rules; `small`:
        the template, the workspace's instructions and the short tool rules only."""
        if small:
            return self._small_prompt(persona_id)
        if persona_id in self._prompt_cache:
            return self._prompt_cache[persona_id]
        personas = self.get_persona_definitions()
        parts: list[str] = []
        if persona_id is not None:
            if persona_id not in personas:
                raise self.unknown_persona(persona_id)
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
        for doc in self._docs.values():
            if doc.kind == "agents_md":
                parts.append(f"# Workspace instructions ({doc.doc_id})\n" + doc.content.strip())
        parts.append(TOOLS_BLOCK)
        prompt = "\n\n".join(p for p in parts if p)
        self._prompt_cache[persona_id] = prompt
        return prompt

    def _small_prompt(self, persona_id: str | None) -> str:
        if persona_id is not None and persona_id not in self.get_persona_definitions():
            raise self.unknown_persona(persona_id)
        parts = [self._template.strip() if self._template else ""]
        parts += [f"# Workspace instructions ({d.doc_id})\n" + d.content.strip() for d in self._docs.values()
                  if d.kind == "agents_md"]
        parts.append(SMALL_TOOLS_BLOCK)
        return "\n\n".join(p for p in parts if p)
