from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.dcm import DynamicContextManager
from framework_core.errors import ConfigError


def make(tmp_path: Path, context: str, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ctx = tmp_path / "FRAMEWORK_CONTEXT.md"
    ctx.write_text(context)
    return ctx


def test_sections_docs_template_and_personas(tmp_path: Path) -> None:
    ctx = make(tmp_path, '# initial_prompt_template: "Hello \\"you\\"\\nline two"\n'
               "## Personas\nforge: @./p/forge.md\n- helper: @./p/helper.md\n"
               "## Standards\nstyle: @./docs/style.md\n", {
                   "p/forge.md": "# Forge", "p/helper.md": "# Helper", "docs/style.md": "Be brief."})
    dcm = DynamicContextManager(str(ctx))
    assert dcm.get_initial_prompt_template() == 'Hello "you"\nline two'
    assert dcm.get_persona_definitions() == {"forge": "# Forge", "helper": "# Helper"}
    assert dcm.get_document_content("style") == "Be brief."
    assert dcm.get_document_content("nope") is None
    assert set(dcm.get_full_initial_context()) == {"forge", "helper", "style"}
    assert dcm.warnings == []


def test_missing_document_is_a_warning_naming_it(tmp_path: Path) -> None:
    ctx = make(tmp_path, "## Standards\ngone: @./docs/missing.md\n", {})
    dcm = DynamicContextManager(str(ctx))
    assert len(dcm.warnings) == 1 and "gone" in dcm.warnings[0] and "missing.md" in dcm.warnings[0]


def test_missing_context_file_does_not_crash(tmp_path: Path) -> None:
    dcm = DynamicContextManager(str(tmp_path / "nope.md"))
    assert dcm.warnings and dcm.documents() == []
    assert "icerc_full_text" in dcm.build_system_prompt(None)


def test_system_prompt_order_and_unknown_persona(tmp_path: Path) -> None:
    ctx = make(tmp_path, "## Personas\nforge: @./p/forge.md\n## Standards\nstyle: @./s.md\n",
               {"p/forge.md": "FORGE-DEF", "s.md": "STYLE-DOC"})
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("AGENTS-RULES")
    dcm = DynamicContextManager(str(ctx), workspace=ws)
    prompt = dcm.build_system_prompt("forge")
    assert prompt.index("FORGE-DEF") < prompt.index("STYLE-DOC") < prompt.index("AGENTS-RULES")
    with pytest.raises(ConfigError, match="Valid personas: forge"):
        dcm.build_system_prompt("nobody")
    kinds = {d.doc_id: d.kind for d in dcm.documents()}
    assert kinds == {"forge": "persona", "style": "document", "AGENTS.md": "agents_md"}


def test_agents_md_is_capped_with_a_note(tmp_path: Path) -> None:
    ctx = make(tmp_path, "", {})
    (tmp_path / "AGENTS.md").write_text("x" * 5000)
    dcm = DynamicContextManager(str(ctx), workspace=tmp_path, agents_md_max_bytes=100)
    doc = dcm.get_document_content("AGENTS.md") or ""
    assert doc.startswith("x" * 100) and "truncated" in doc and dcm.warnings


def test_shipped_context_has_forge_and_catalyst() -> None:
    root = Path(__file__).resolve().parents[2]
    dcm = DynamicContextManager(str(root / "FRAMEWORK_CONTEXT.md"))
    assert {"forge", "catalyst"} <= set(dcm.persona_ids()) and dcm.warnings == []
    forge = dcm.get_persona_definitions()["forge"]
    for part in ("Intent", "Command", "Expected outcome", "Risk assessment", "Confirmation request", "icerc_full_text"):
        assert part in forge
