"""A first AGENTS.md for a workspace, drafted from what is there: the README's opening, the languages, the
layout, and the build and test commands its files declare (Makefile targets, package.json scripts,
pyproject, Cargo, Go). Nothing is run and no model is asked; the user (or the model) improves it after."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

from framework_core.wording import plural

SKIP = {".git", ".venv", "venv", "node_modules", "__pycache__", "dist", "build", "target", ".mypy_cache",
        ".pytest_cache", ".tox", ".idea", ".vscode", ".laca"}
LANGUAGES = {".py": "Python", ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript", ".jsx": "JavaScript",
             ".go": "Go", ".rs": "Rust", ".java": "Java", ".kt": "Kotlin", ".rb": "Ruby", ".php": "PHP",
             ".c": "C", ".h": "C", ".cpp": "C++", ".cc": "C++", ".hpp": "C++", ".cs": "C#", ".swift": "Swift",
             ".sh": "Shell", ".md": "Markdown"}
MAX_FILES = 20_000


def draft_agents_md(workspace: Path) -> str:
    name = workspace.name or "this project"
    parts = [f"# AGENTS.md: working in {name}", "",
             "Instructions for coding agents (LACA reads this file, as Codex does; Claude Code reads CLAUDE.md and "
             "Gemini CLI GEMINI.md). Drafted by /init from the files here: correct and extend it.", ""]
    about = readme_opening(workspace)
    langs = languages(workspace)
    if about or langs:
        parts += ["## Project", ""]
        parts += [about, ""] if about else []
        counted = ", ".join(f"{lang} ({plural(n, 'file')})" for lang, n in langs)
        parts += [f"Languages: {counted}", ""] if langs else []
    layout = top_level(workspace)
    if layout:
        parts += ["## Layout", ""] + [f"- `{entry}`" for entry in layout] + [""]
    commands = build_commands(workspace)
    parts += ["## Commands", ""]
    parts += [f"- `{cmd}`: {why}" for cmd, why in commands] if commands else [
        "- (none found: add how to build, run and test this project)"]
    parts += ["", "## Conventions", "", "- Run the tests before saying a change is done.",
              "- Keep changes small and focused; follow the style of the code around them.",
              "- (add: code style, naming, what not to touch)", ""]
    return "\n".join(parts)


def readme_opening(workspace: Path) -> str:
    for name in ("README.md", "README.rst", "README.txt", "README"):
        path = workspace / name
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")[:8000]
            except OSError:
                return ""
            paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
            body = [p for p in paras if not p.startswith(("#", "[!", "![", "<", "```", "="))]
            return " ".join(body[0].split())[:500] if body else ""
    return ""


def _walk(workspace: Path):
    seen = 0
    for root, dirs, files in os.walk(workspace):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith(".")]
        for f in files:
            seen += 1
            if seen > MAX_FILES:
                return
            yield Path(root) / f


def languages(workspace: Path) -> list[tuple[str, int]]:
    counts = Counter(LANGUAGES[p.suffix] for p in _walk(workspace) if p.suffix in LANGUAGES)
    counts.pop("Markdown", None)
    return counts.most_common(4)


def top_level(workspace: Path) -> list[str]:
    try:
        entries = sorted(os.scandir(workspace), key=lambda e: (not e.is_dir(), e.name))
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name in SKIP or e.name.startswith("."):
            continue
        out.append(e.name + ("/" if e.is_dir() else ""))
    return out[:25]


def build_commands(workspace: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    makefile = workspace / "Makefile"
    if makefile.is_file():
        targets = re.findall(r"^([A-Za-z][\w-]*):", makefile.read_text(encoding="utf-8", errors="replace"), re.M)
        for target in [t for t in ("build", "run", "test", "lint", "check", "format", "bench") if t in targets]:
            found.append((f"make {target}", "Makefile target"))
    package = workspace / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(encoding="utf-8")).get("scripts") or {}
        except (ValueError, OSError, AttributeError):
            scripts = {}
        for script in [s for s in ("build", "dev", "start", "test", "lint") if s in scripts]:
            found.append((f"npm run {script}" if script not in ("test", "start") else f"npm {script}",
                          f"package.json script: {str(scripts[script])[:60]}"))
    pyproject = workspace / "pyproject.toml"
    if pyproject.is_file() or (workspace / "pytest.ini").is_file() or (workspace / "tests").is_dir():
        text = pyproject.read_text(encoding="utf-8", errors="replace") if pyproject.is_file() else ""
        if "pytest" in text or (workspace / "pytest.ini").is_file() or (workspace / "tests").is_dir():
            found.append(("python -m pytest -q", "the tests (pytest)"))
    if (workspace / "Cargo.toml").is_file():
        found += [("cargo build", "Cargo"), ("cargo test", "Cargo")]
    if (workspace / "go.mod").is_file():
        found += [("go build ./...", "Go module"), ("go test ./...", "Go module")]
    return found
