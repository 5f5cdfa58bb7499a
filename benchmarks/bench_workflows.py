"""Everyday workflows in the sandbox: how many work with no extra step, against a direct run.

A scripted model asks for each workflow's commands, one per reply, in one LACA session run in-process with the
REPL's own approval path (a scripted approver in place of the keys): once in auto mode, once in ask mode. Asked
questions are answered `y`, or `w` ("yes, with network") for a workflow that needs a registry when the policy
judged its command local. Each workflow's folder then is compared with a direct `bash -c` run of the same
commands in a copy of the workspace (HOME a throwaway copy of the same home). Prints a table; not a pass/fail test
(the offline twelve are `tests/integration/test_workflows_auto.py`).

    python -m benchmarks.bench_workflows [--base /work/scratch/bench-workflows] [--only NAME-PART]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import workflow_rig as rig  # noqa: E402
from tests.workflow_rig import Workflow, _cd  # noqa: E402

REGISTRIES = {"PyPI": "https://pypi.org/simple/six/", "npm": "https://registry.npmjs.org/is-number",
              "crates.io": "https://index.crates.io/config.json", "Maven Central": "https://repo.maven.apache.org/"}

NETWORK: tuple[Workflow, ...] = (
    Workflow("pip install from PyPI into a venv", "pypi",
             _cd("pypi", "python3 -m venv .venv && .venv/bin/pip install six==1.16.0",
                 ".venv/bin/python -c 'import six; print(six.__version__)' > out.txt"), network=True),
    Workflow("python -m pip install -e .", "editable",
             _cd("editable", "python3 -m venv .venv && .venv/bin/python -m pip install -e .",
                 ".venv/bin/python -c 'import edpkg; print(edpkg.VALUE)' > out.txt"), network=True),
    Workflow("python -m build", "pybuild",
             _cd("pybuild", "python3 -m venv .venv && .venv/bin/pip install build",
                 ".venv/bin/python -m build --wheel"), network=True, network_steps=(0, 1)),
    Workflow("uv pip install", "uv", _cd("uv", "uv venv && uv pip install six"), network=True, needs=("uv",)),
    Workflow("npm ci with a lockfile", "npmci",
             _cd("npmci", "npm ci", "node -e \"console.log(require('is-number')(5))\" > out.txt"), network=True,
             needs=("npm",)),
    Workflow("npx", "npx", _cd("npx", "npx -y cowsay@1.6.0 moo > cow.txt"), network=True, needs=("npx",)),
    Workflow("cargo build (crate with a dependency)", "cargo", _cd("cargo", "cargo build -q"), network=True,
             needs=("cargo",)),
    Workflow("cargo build (crate without dependencies)", "cargolocal", _cd("cargolocal", "cargo build -q"),
             needs=("cargo",)),
    Workflow("go mod download", "gomod", _cd("gomod", "go mod download"), network=True, needs=("go",)),
    Workflow("mvn -q -o validate", "mvn", _cd("mvn", "mvn -q -o validate"), needs=("mvn",)),
    Workflow("pre-commit-style hook cache", "hook",
             _cd("hook", "echo x > f.txt && git add f.txt && git commit -q -m add",
                 "cat ~/.cache/pre-commit/ran > hook-ran.txt")),
    Workflow("git worktree add inside the workspace", "worktree",
             _cd("worktree", "git worktree add -q -b wt-branch wt",
                 "cd wt && echo w > w.txt && git add w.txt && git commit -q -m 'in worktree'")),
    Workflow("npm install of a registry package", "npmreg",
             _cd("npmreg", "npm install --no-audit --no-fund is-number@7.0.0"), network=True, needs=("npm",)),
    Workflow("git rebase + tag", "rebase", _cd("rebase", "git checkout -q feature && git rebase -q main && "
                                                         "git tag v1")),
    Workflow("pytest (writes .pytest_cache)", "pytest", _cd("pytest", "python3 -m pytest -q -p no:randomly")),
    Workflow("files: ln -s, cp -r, rm -r", "files", _cd("files", "ln -s data/one.txt link && cp -r data copy && "
                                                                 "rm -r old")),
    Workflow("pip install --user (a local wheel)", "pipuser",
             _cd("pipuser", "python3 -m pip install --user --no-index ../py/dist/wfpkg-0.1-py3-none-any.whl",
                 "python3 -c 'import wfpkg' && echo importable > out.txt")),
    Workflow("npm config set (user level)", "npmconfig",
             _cd("npmconfig", "npm config set fund false", "npm config get fund > fund.txt"), needs=("npm",)),
)
HOOK = "#!/bin/sh\nmkdir -p \"$HOME/.cache/pre-commit\" && echo ran > \"$HOME/.cache/pre-commit/ran\"\n"


def reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=8):
            return True
    except Exception:
        return False


def build_more(ws: Path, home: Path, reach: dict[str, bool]) -> None:
    """The larger list's folders (a lockfile is made here, with the network, outside LACA)."""
    env = rig._base_env(home)
    (ws / "pypi").mkdir()
    for name, pkg in (("editable", "edpkg"), ("pybuild", "bpkg")):
        (ws / name / pkg).mkdir(parents=True)
        (ws / name / pkg / "__init__.py").write_text("VALUE = 7\n")
        (ws / name / "pyproject.toml").write_text(
            f'[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
            f'[project]\nname = "{pkg}"\nversion = "0.1"\n\n[tool.setuptools]\npackages = ["{pkg}"]\n')
    (ws / "uv").mkdir()
    (ws / "npmci").mkdir()
    (ws / "npmci" / "package.json").write_text('{"name": "ci", "version": "1.0.0", "private": true,\n'
                                               ' "dependencies": {"is-number": "7.0.0"}}\n')
    if reach["npm"] and shutil.which("npm"):
        subprocess.run(["npm", "install", "--package-lock-only", "--no-audit", "--no-fund"], cwd=ws / "npmci",
                       env=env, capture_output=True, timeout=300)
    (ws / "npx").mkdir()
    (ws / "cargo" / "src").mkdir(parents=True)
    (ws / "cargo" / "Cargo.toml").write_text('[package]\nname = "wf"\nversion = "0.1.0"\nedition = "2021"\n\n'
                                             '[dependencies]\nitoa = "1"\n')
    (ws / "cargo" / "src" / "main.rs").write_text('fn main() { println!("hi"); }\n')
    (ws / "cargolocal" / "src").mkdir(parents=True)
    (ws / "cargolocal" / "Cargo.toml").write_text('[package]\nname = "wfl"\nversion = "0.1.0"\nedition = "2021"\n')
    (ws / "cargolocal" / "src" / "main.rs").write_text('fn main() { println!("hi"); }\n')
    (ws / "gomod").mkdir()
    (ws / "mvn").mkdir()
    (ws / "mvn" / "pom.xml").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>wf'
        '</groupId><artifactId>wf</artifactId><version>1</version><packaging>pom</packaging></project>\n')
    for name in ("hook", "worktree"):
        repo = ws / name
        repo.mkdir()
        rig._git(repo, "init", "-q", "-b", "main", home=home)
        (repo / "a.txt").write_text("one\n")
        rig._git(repo, "add", "a.txt", home=home)
        rig._git(repo, "commit", "-q", "-m", "first", home=home)
    (ws / "hook" / ".git" / "hooks" / "pre-commit").write_text(HOOK)
    (ws / "hook" / ".git" / "hooks" / "pre-commit").chmod(0o755)
    (ws / "npmconfig").mkdir()
    (ws / "npmreg").mkdir()
    (ws / "npmreg" / "package.json").write_text('{"name": "reg", "version": "1.0.0", "private": true}\n')
    repo = ws / "rebase"
    repo.mkdir()
    rig._git(repo, "init", "-q", "-b", "main", home=home)
    for branch, name in (("main", "a.txt"), ("feature", "b.txt"), ("main", "c.txt")):
        if branch == "feature":
            rig._git(repo, "checkout", "-q", "-b", "feature", home=home)
        elif (repo / "a.txt").exists():
            rig._git(repo, "checkout", "-q", "main", home=home)
        (repo / name).write_text(name + "\n")
        rig._git(repo, "add", name, home=home)
        rig._git(repo, "commit", "-q", "-m", f"add {name}", home=home)
    (ws / "pytest").mkdir()
    (ws / "pytest" / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    (ws / "files" / "data").mkdir(parents=True)
    (ws / "files" / "data" / "one.txt").write_text("1\n")
    (ws / "files" / "old" / "deep").mkdir(parents=True)
    (ws / "files" / "old" / "deep" / "x").write_text("x\n")
    (ws / "pipuser").mkdir()


@dataclass
class Pass:
    """What one LACA session did: per workflow, the commands it asked about."""

    asked: dict[str, list[str]] = field(default_factory=dict)
    answers: dict[str, list[str]] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)  # command -> what the model read of its result
    seconds: float = 0.0


class Answerer:
    """The user at the REPL: `y`, or `w` for a workflow that needs a registry when it is offered."""

    def __init__(self, flows: tuple[Workflow, ...], record: Pass) -> None:
        self.by_command = {c: f for f in flows for c in f.commands}
        self.needs_network = {c for f in flows if f.network for i, c in enumerate(f.commands)
                              if i in f.network_steps}
        self.record = record

    def approve(self, req):  # type: ignore[no-untyped-def]
        from framework_core.core.approval import ApprovalAnswer

        command = str(req.request.parameters.get("command", ""))
        flow = self.by_command.get(command)
        name = flow.name if flow else "?"
        net = command in self.needs_network and req.can_network
        self.record.asked.setdefault(name, []).append(command)
        self.record.answers.setdefault(name, []).append("w" if net else "y")
        return ApprovalAnswer("once", network=net)

    def review_changes(self, req, summary, diff):  # type: ignore[no-untyped-def]
        return True


def _keep_result(event: object, record: Pass) -> None:
    from framework_core.core.events import ToolCallFinished

    if isinstance(event, ToolCallFinished):
        record.results[str(event.request.parameters.get("command", ""))] = event.result.to_model_text()


def laca_pass(ws: Path, flows: tuple[Workflow, ...], mode: str) -> Pass:
    """One in-process session over every workflow's commands in `mode` (HOME etc. already in os.environ)."""
    from framework_core.app.wiring import build_agent
    from framework_core.config.load import Overrides, load_config
    from framework_core.core.session import open_session
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.fakes.script import Reply, ToolCallSpec

    record = Pass()
    commands = [c for f in flows for c in f.commands]
    start = time.perf_counter()
    cwd = os.getcwd()
    with FakeOpenAIServer() as server:
        os.environ.update({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url})
        server.enqueue(*[Reply(tool_calls=[ToolCallSpec("executeBashCommand", {
            "command": c, "icerc_full_text": f"Intent: an everyday step\nCommand: {c}"})]) for c in commands],
            Reply(text="done"))
        os.chdir(ws)
        try:
            loaded = load_config(ws, Overrides())
            session = open_session(Path(os.environ["XDG_DATA_HOME"]) / "laca" / f"bench-{mode}")
            parts = build_agent(loaded, events=lambda e: _keep_result(e, record),
                                approver=Answerer(flows, record), session=session, start_mcp=False)
            assert parts.facade is not None
            parts.facade.set_mode(mode)
            parts.facade.turn("run the workflows")
            parts.facade.close()
        finally:
            os.chdir(cwd)
    record.seconds = time.perf_counter() - start
    return record


#: Workflows whose dependency comes from a registry this machine may not reach (then built without it).
NEEDS_REGISTRY = {"cargo build (crate with a dependency)": "crates.io"}


def verdicts(flows: tuple[Workflow, ...], base: Path, home: Path, direct_codes: dict[str, list[int]],
             passes: dict[str, Pass], reach: dict[str, bool]) -> list[list[str]]:
    rows = []
    direct_home = base / "direct-home"
    for f in flows:
        missing = rig.missing_programs(f)
        registry = NEEDS_REGISTRY.get(f.name, "")
        if missing or registry and not reach[registry]:
            why = f"not installed ({', '.join(missing)})" if missing else f"{registry} unreachable from here"
            rows.append([f.name, f"not measured: {why}", "–", "–", ""])
            continue
        ok = all(c == 0 for c in direct_codes[f.name])
        direct = "works" if ok else f"fails (exit {','.join(map(str, direct_codes[f.name]))})"
        cells, notes = [], []
        want = rig.snapshot(base / "direct" / f.folder, {str(base / "direct"): "<WS>", str(direct_home): "<HOME>"},
                            direct_home)
        for mode in ("auto", "ask"):
            ws = base / mode
            got = rig.snapshot(ws / f.folder, {str(ws): "<WS>", str(home): "<HOME>"}, home)
            diff = rig.differences(got, want, limit=2)
            answers = passes[mode].answers.get(f.name, [])
            how = "no question" if not answers else "after " + "+".join(answers)
            cells.append(f"{'same' if not diff else 'differs'} ({how})")
            if diff and mode == "ask":
                notes.append("; ".join(d[:160] for d in diff))
        rows.append([f.name, direct, *cells, " ".join(notes)])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="/work/scratch/bench-workflows", help="a folder outside /tmp (emptied)")
    parser.add_argument("--show", action="store_true", help="print what LACA said for workflows that differ")
    parser.add_argument("--only", default="", help="run only workflows whose name contains this")
    args = parser.parse_args(argv)
    base = Path(args.base).resolve()
    if str(base).startswith("/tmp") or base == Path.home():
        raise SystemExit("--base must be a throwaway folder outside /tmp (the sandbox gives commands a private /tmp)")
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    reach = {name: reachable(url) for name, url in REGISTRIES.items()}
    flows = tuple(f for f in rig.OFFLINE + NETWORK if args.only.lower() in f.name.lower())
    home, pristine = rig.make_home(base / "home"), base / "pristine"
    pristine.mkdir()
    setup_home = rig.make_home(base / "setup-home")
    rig.build_workspace(pristine, setup_home)
    build_more(pristine, setup_home, reach)
    runnable = tuple(f for f in flows
                     if not rig.missing_programs(f) and reach.get(NEEDS_REGISTRY.get(f.name, ""), True))
    rig.copy_tree(pristine, base / "direct")
    rig.copy_tree(home, base / "direct-home")
    codes = {f.name: rig.run_direct(base / "direct", base / "direct-home", f.commands) for f in runnable}
    os.environ.update(rig._base_env(home))
    passes = {}
    for mode in ("auto", "ask"):
        rig.copy_tree(pristine, base / mode)
        passes[mode] = laca_pass(base / mode, runnable, mode)
    rows = verdicts(flows, base, home, codes, passes, reach)
    print("registries reachable: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in reach.items()))
    print("| workflow | direct | LACA auto | LACA ask + y/w | notes |\n|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    works = [r for r in rows if r[1] == "works"]
    print(f"\nwork directly: {len(works)} of {len(rows)}; of those, the same with LACA: auto "
          f"{sum(r[2].startswith('same') for r in works)}, auto with no question "
          f"{sum(r[2] == 'same (no question)' for r in works)}, ask + y/w {sum(r[3].startswith('same') for r in works)}"
          f"; LACA sessions {passes['auto'].seconds:.0f} s (auto), {passes['ask'].seconds:.0f} s (ask)")
    if args.show:
        for f, r in zip(flows, rows, strict=True):
            if "differs" in r[2] + r[3]:
                for c in f.commands:
                    print(f"\n--- {c}\n{passes['ask'].results.get(c, '(not run)')[-1500:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
