"""The layers of `framework_core/`, checked on the source: what each package may import (docs/ARCHITECTURE.md,
"What each package may import"), no import cycle at module level, and front ends that use only the façade.

Every import counts, lazy ones inside functions and type-only ones included: a dependency is a dependency.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "framework_core"

#: Layer of each top-level module or package, lowest first. A module may import its own layer's modules (same
#: package, or the modules listed together) and any lower layer, never a higher one.
LAYERS: list[tuple[str, ...]] = [
    ("framework_core", "errors", "wording"),       # the exception hierarchy and the words shown to users
    ("policy",),                                    # pure: imports nothing else of LACA (checked below)
    ("config",),                                    # models, loader, YAML reader, shipped defaults, trust
    ("lial_core", "dcm", "sandbox", "estimate"),    # the message types, the context documents, the sandbox, estimates
    ("tools", "adapters"),                          # tool registry and executor; one adapter per wire API
    ("core", "teps"),                               # the turn loop, sessions, TEPS, the façade
    ("ui",),                                        # front ends: talk to the façade only
    ("app", "__main__"),                            # entry, CLI, start-up, wiring: the only place objects are built
]
#: Unit pairs of one layer that must not import each other (they are siblings, not a stack).
SIBLINGS = {frozenset({"tools", "adapters"})}
#: What `ui/` may import of the core layer: the façade and the records it hands out, never the agent's parts;
#: `core.session` for the saved sessions' list (`--resume`, /sessions), which exists before any façade.
UI_MAY_USE = {"core.facade", "core.events", "core.approval", "core.options", "core.session"}


def unit(module: str) -> str:
    """`framework_core.core.agent` -> `core`; `framework_core` -> `framework_core`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


@cache
def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _resolve(name: str) -> str | None:
    """The module an import names (`from a.b import c` may name the module a.b.c or a name in a.b)."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports(module: str) -> tuple[tuple[str, int, str], ...]:
    """(imported module, line, how) for every LACA import; `how` is "top" (at import time), "lazy" (inside a
    function) or "type" (under `if TYPE_CHECKING`)."""
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, top: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("framework_core"):
                for alias in child.names:
                    target = _resolve(f"{child.module}.{alias.name}")
                    if target:
                        found.append((target, child.lineno, top))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("framework_core") and (target := _resolve(alias.name)):
                        found.append((target, child.lineno, top))
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                visit(child, "type")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, "lazy" if top == "top" else top)
            else:
                visit(child, top)

    visit(tree, "top")
    return tuple(dict.fromkeys(found))  # `from m import a, b` names m once


def test_every_top_level_module_and_package_has_a_layer() -> None:
    units = {unit(m) for m in modules()}
    assert units - set(RANK) == set(), "give each new top-level module or package a layer in LAYERS"


def test_no_module_imports_a_higher_layer_or_a_sibling() -> None:
    problems = []
    for module in modules():
        here = unit(module)
        for target, line, _ in imports(module):
            there = unit(target)
            if RANK[there] > RANK[here] or frozenset({here, there}) in SIBLINGS:
                problems.append(f"{modules()[module].relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not problems, "\n".join(problems)


def test_policy_imports_only_itself() -> None:
    problems = [f"{m}:{line} imports {t}" for m in modules() if unit(m) == "policy"
                for t, line, _ in imports(m) if unit(t) != "policy"]
    assert not problems, "\n".join(problems)


def test_ui_uses_only_the_facade_of_the_core() -> None:
    problems = []
    for module in (m for m in modules() if unit(m) == "ui"):
        for target, line, _ in imports(module):
            inner = target.removeprefix("framework_core.")
            if unit(target) in ("core", "teps") and inner not in UI_MAY_USE:
                problems.append(f"{module}:{line} imports {target}")
        source = modules()[module].read_text(encoding="utf-8")
        for n, text in enumerate(source.splitlines(), start=1):
            if re.search(r"\.agent\b|\bagent\.(teps|session|dcm|mcp|adapter|config)\b", text):
                problems.append(f"{module}:{n} reaches into the agent: {text.strip()}")
    assert not problems, "\n".join(problems)


#: Loops closed by a lazy import inside one package, where the code itself is mutually recursive: a `$(< file)`
#: word reads a redirection.
RECURSIVE = {frozenset({"framework_core.policy.words", "framework_core.policy.redirects"})}


def _loops(kinds: set[str]) -> list[list[str]]:
    """The import loops (strongly connected components of more than one module) over imports of `kinds`."""
    graph = {m: sorted({t for t, _, how in imports(m) if how in kinds and t != m}) for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            loop = []
            while True:
                member = stack.pop()
                loop.append(member)
                if member == node:
                    break
            if len(loop) > 1:
                loops.append(sorted(loop))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return loops


def test_no_import_cycle_at_import_time() -> None:
    assert _loops({"top"}) == []


def test_no_import_loop_through_lazy_imports_but_the_recursive_ones() -> None:
    loops = {frozenset(loop) for loop in _loops({"top", "lazy"})}
    assert (loops - RECURSIVE, RECURSIVE - loops) == (set(), set())  # no new loop, and no allowed one outlived
