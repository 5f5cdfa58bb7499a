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
    for persona in ("forge", "catalyst"):  # the ICERC brief is explained once, whatever the persona
        prompt = dcm.build_system_prompt(persona)
        for part in ("Intent:", "Command:", "Expected outcome:", "Risk assessment:", "Confirmation request:"):
            assert prompt.count(part) == 1, (persona, part)
        assert "icerc_full_text" in prompt and "JSON" not in prompt


# ---- hostile context files: nothing outside the allowed roots, nothing that blocks, nothing huge ----------

def test_documents_outside_the_roots_are_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = make(ws, "## Docs\npasswd: @../../../../../../etc/passwd\nhost: @/etc/hostname\nok: @./notes.md\n",
               {"notes.md": "NOTES"})
    (ws / "link.md").symlink_to("/etc/passwd")
    (ws / "FRAMEWORK_CONTEXT.md").write_text(ctx.read_text() + "via_link: @./link.md\n")
    dcm = DynamicContextManager(str(ctx), workspace=ws, roots=[ws])
    assert dcm.get_document_content("ok") == "NOTES"
    for doc in ("passwd", "host", "via_link"):
        assert dcm.get_document_content(doc) is None
    assert len([w for w in dcm.warnings if "is outside" in w]) == 3
    assert "root:" not in dcm.build_system_prompt(None)


def test_fifo_device_and_binary_documents_are_skipped_without_blocking(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "blob.md").write_bytes(b"\x7fELF\x00\x00binary")
    (tmp_path / "latin.md").write_bytes(b"caf\xe9 " * 10)
    ctx = make(tmp_path, "## Docs\npipe: @./pipe.md\nzero: @/dev/zero\nblob: @./blob.md\nlatin: @./latin.md\n", {})
    dcm = DynamicContextManager(str(ctx), roots=[tmp_path, Path("/dev")])
    assert dcm.documents() == []
    text = "\n".join(dcm.warnings)
    assert text.count("not a regular file") == 2 and "binary" in text and "not UTF-8" in text


def test_a_huge_document_is_cut_with_a_note(tmp_path: Path) -> None:
    from framework_core.dcm import DOC_MAX_BYTES

    ctx = make(tmp_path, "## Docs\nbig: @./big.md\n", {"big.md": "word " * 1_000_000})
    dcm = DynamicContextManager(str(ctx))
    content = dcm.get_document_content("big") or ""
    assert len(content) < DOC_MAX_BYTES + 200 and "cut at" in content
    assert any("only the first" in w for w in dcm.warnings)


def test_agents_md_that_is_a_fifo_or_a_link_out_is_skipped(tmp_path: Path) -> None:
    import os

    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "AGENTS.md")
    ctx = make(tmp_path, "## Docs\n", {})
    dcm = DynamicContextManager(str(ctx), workspace=ws)
    assert dcm.get_document_content("AGENTS.md") is None and "AGENTS.md skipped" in dcm.warnings[0]
    (ws / "AGENTS.md").unlink()
    (ws / "AGENTS.md").symlink_to("/etc/passwd")
    assert DynamicContextManager(str(ctx), workspace=ws).get_document_content("AGENTS.md") is None


def test_missing_context_file_is_named_as_the_cause(tmp_path: Path) -> None:
    dcm = DynamicContextManager(str(tmp_path / "nope.md"))
    err = dcm.unknown_persona("forge")
    assert "context file could not be used" in str(err) and "nope.md" in str(err)


def test_a_workspace_context_file_cannot_pull_files_from_elsewhere(workspace: Path, tmp_path: Path) -> None:
    """Through the real config layers: the workspace names its own context file (trusted, so it is used), and
    that file's documents must still stay inside the workspace or the install."""
    from framework_core.config.load import Overrides, load_config
    from framework_core.app.wiring import context_roots

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("SECRET")
    (workspace / "personas").mkdir()
    (workspace / "personas" / "forge.md").write_text("FORGE")
    (workspace / "ctx.md").write_text(f"## Docs\nsecret: @{outside / 'secret.md'}\n")
    (workspace / "framework_config.yaml").write_text("context_definition_file: ctx.md\n")
    loaded = load_config(workspace, Overrides(trust=True), env={})
    assert loaded.config.context_definition_file == str(workspace / "ctx.md")
    dcm = DynamicContextManager(loaded.config.context_definition_file, workspace=workspace,
                                roots=context_roots(loaded))
    assert dcm.get_document_content("secret") is None and dcm.persona_ids() == ["forge"]
    user_named = load_config(workspace, Overrides(trust=True), env={"LACA_CONTEXT_FILE": str(outside / "c.md")})
    assert outside in context_roots(user_named)


def test_a_huge_attached_file_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    """`@big.log` of 5 GB (sparse) under a 1 GB memory limit: only the capped head is read."""
    import subprocess
    import sys
    import textwrap

    ws = tmp_path / "ws"
    ws.mkdir()
    with open(ws / "big.log", "wb") as fh:
        fh.write(b"a log line\n" * 1000)  # text where it is read (a head of zeros would look binary)
        fh.truncate(5_000_000_000)
    code = textwrap.dedent(f"""
        import resource
        from pathlib import Path
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from framework_core.ui.completion import expand_attachments
        text, notes = expand_attachments("see @big.log", Path({str(ws)!r}), 1000)
        print(notes[0])
    """)
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-1000:]
    assert "truncated to 1,000 of 5,000,000,000 bytes" in run.stdout


def test_claude_md_imports_are_followed_inside_the_workspace_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET-OUTSIDE")
    (ws / "CLAUDE.md").write_text("Follow @docs/style.md and @../outside.md; `@docs/ignored.md` is code.\n"
                                  "```\n@docs/fenced.md\n```\n")
    (ws / "docs" / "style.md").write_text("Use tabs. See @deeper.md\n")
    (ws / "docs" / "deeper.md").write_text("DEEPER-RULE")
    (ws / "docs" / "ignored.md").write_text("IGNORED")
    (ws / "docs" / "fenced.md").write_text("FENCED")
    ctx = make(tmp_path, "", {})
    dcm = DynamicContextManager(str(ctx), workspace=ws)
    doc = dcm.get_document_content("CLAUDE.md") or ""
    assert "Use tabs." in doc and "DEEPER-RULE" in doc
    assert "SECRET-OUTSIDE" not in doc and "IGNORED" not in doc and "FENCED" not in doc
    assert any("@../outside.md in CLAUDE.md not imported" in w and "outside" in w for w in dcm.warnings)


def test_claude_md_imports_stop_at_five_levels_and_at_the_size_cap(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "CLAUDE.md").write_text("@l1.md")
    for n in range(1, 8):
        (ws / f"l{n}.md").write_text(f"LEVEL{n} @l{n + 1}.md")
    dcm = DynamicContextManager(str(make(tmp_path, "", {})), workspace=ws)
    doc = dcm.get_document_content("CLAUDE.md") or ""
    assert "LEVEL5" in doc and "LEVEL6" not in doc and any("5 levels deep" in w for w in dcm.warnings)
    (ws / "big.md").write_text("y" * 5000)
    (ws / "CLAUDE.md").write_text("@big.md")
    small = DynamicContextManager(str(make(tmp_path, "", {})), workspace=ws, agents_md_max_bytes=300)
    assert len(small.get_document_content("CLAUDE.md") or "") < 400
