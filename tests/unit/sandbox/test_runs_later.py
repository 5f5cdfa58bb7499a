"""What runs later, as one table: which files run when a program is named (they land, named), which run with
nothing named (auto mode holds them), files that name others, and the result's one line per folder."""

from __future__ import annotations

from framework_core.sandbox import runs_later
from framework_core.sandbox.gate import Gate, Kind


class Tree:
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def kind(self, rel: str) -> Kind:
        if rel in self.files:
            return "file"
        return "dir" if any(f.startswith(rel + "/") for f in self.files) or rel == "" else "absent"

    def read(self, rel: str) -> bytes | None:
        return self.files.get(rel)


def test_implicit_files_are_told_from_those_a_named_program_runs() -> None:
    implicit = [".venv/lib/python3.11/site-packages/evil.pth", "sitecustomize.py", ".venv/bin/activate",
                ".venv/bin/activate.fish", ".vscode/tasks.json", ".envrc", "gradlew", "mvnw",
                "gradle/wrapper/gradle-wrapper.jar", ".github/workflows/ci.yml", ".github/actions/setup/action.yml",
                ".pre-commit-config.yaml", ".husky/pre-commit", ".idea/runConfigurations/App.xml"]
    named = ["Makefile", "package.json", "pyproject.toml", "rules.mk", "build.rs", "conftest.py"]
    for rel in implicit:
        found = runs_later.judge(rel)
        assert found is not None and found.implicit, rel
    for rel in named:
        found = runs_later.judge(rel)
        assert found is not None and not found.implicit, rel
    assert runs_later.judge("src/app.py") is None and runs_later.judge("README.md") is None
    assert runs_later.judge("tools/bin/activate.csh") is not None  # any environment's activation scripts
    assert runs_later.judge("bin/activate_user.py") is None


def test_files_named_by_yarnrc_pyproject_and_envrc_run_with_nothing_named() -> None:
    tree = Tree({
        ".yarnrc.yml": b"nodeLinker: pnp\nyarnPath: .yarn/releases/yarn-4.1.cjs\n",
        "pkg/pyproject.toml": b'[build-system]\nrequires = []\nbuild-backend = "_build.backend:api"\n'
                              b'backend-path = ["tools"]\n',
        ".envrc": b"source_env scripts/env.sh\n. ./more.sh\nexport X=1\n",
        "src/app.py": b"print(1)\n",
    })
    gate = Gate(tree, "/ws")
    for rel in (".yarn/releases/yarn-4.1.cjs", "pkg/tools/_build/backend.py", "scripts/env.sh", "more.sh"):
        judged = gate.judge(rel)
        assert judged.verdict == "runs_later" and judged.implicit, (rel, judged)
    assert gate.judge("src/app.py").verdict == "data"
    assert gate.judge("pkg/tools/other.py").verdict == "data"  # only the backend module is named
    assert gate.judge("Makefile") == gate.judge("Makefile")  # stable
    assert not gate.judge("Makefile").implicit


def test_a_namer_pointing_out_of_the_workspace_names_nothing_here() -> None:
    assert runs_later.named_paths("", lambda rel: b"yarnPath: ../../x.cjs\n" if rel == ".yarnrc.yml" else None) == {}


def test_runs_later_notes_are_one_line_per_folder_with_a_count() -> None:
    found = {f"node_modules/p{i}/package.json": "npm runs its scripts" for i in range(400)}
    found["Makefile"] = "make runs its recipes"
    found[".github/workflows/a.yml"] = "CI runs its workflows"
    items = runs_later.by_folder(found)
    assert items == ["node_modules/ (400 files: npm runs its scripts)", "Makefile (make runs its recipes)",
                     ".github/workflows/a.yml (CI runs its workflows)"]
    assert sum(len(i) for i in items) < 200
    assert runs_later.by_folder(found, why=False)[0] == "node_modules/ (400 files)"
