"""The dependency rule between the apps, read from every import statement (function-level ones too).

- No import cycle between modules.
- `annotator` imports only the pure `evaluation.metrics` and `evaluation.formats`; the root URLconf
  and the demo are the exceptions (they wire the `evaluation` app in).
- `annotator.web`, the request plumbing, imports no area's views, forms, urls or services.
- The pure leaves (`evaluation.metrics`, `evaluation.formats`, `evaluation.reports`,
  `evaluation.systems_reports`, `evaluation.cli`, `annotator.disputes.agreement`) import neither
  Django nor `annotator`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotator", "evaluation")
AREAS = ("projects", "documents", "grading", "disputes", "pools")
ANNOTATOR_MAY_IMPORT = ("evaluation.metrics", "evaluation.formats")
ANNOTATOR_EXCEPTIONS = ("annotator.urls", "annotator.demo", "annotator.management.commands.demo")
PURE = (
    "evaluation.metrics",
    "evaluation.formats",
    "evaluation.reports",
    "evaluation.systems_reports",
    "evaluation.cli",
    "annotator.disputes.agreement",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[module_name(path)] = path
    return found


MODULES = source_modules()


def imported(name: str, path: Path) -> set[str]:
    """Every module `name` imports, at any depth of the file, resolved to modules of this repo
    (`from a.b import c` counts a.b.c when c is a module, else a.b)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in MODULES else base)
    return targets


GRAPH = {name: imported(name, path) for name, path in MODULES.items()}


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_no_module_imports_itself_back_through_a_cycle() -> None:
    graph = {name: {t for t in targets if t in MODULES and t != name} for name, targets in GRAPH.items()}
    # A package's __init__ importing its own submodules is how a package exposes them, not a cycle.
    for name, targets in graph.items():
        targets.difference_update({t for t in targets if name.startswith(t + ".")})
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target) :] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_annotator_imports_only_the_pure_evaluation_packages() -> None:
    wrong = {
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if within(name, ("annotator",)) and not within(name, ANNOTATOR_EXCEPTIONS)
        for target in targets
        if within(target, ("evaluation",)) and not within(target, ANNOTATOR_MAY_IMPORT)
    }
    assert not wrong, sorted(wrong)


def test_the_request_plumbing_imports_no_area_workflow() -> None:
    layers = tuple(
        f"annotator.{area}.{layer}" for area in AREAS for layer in ("views", "forms", "urls", "services")
    )
    wrong = {
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if within(name, ("annotator.web",))
        for target in targets
        if within(target, layers)
    }
    assert not wrong, sorted(wrong)


@pytest.mark.parametrize("leaf", PURE)
def test_the_pure_leaves_import_neither_django_nor_the_apps(leaf: str) -> None:
    wrong = {
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if within(name, (leaf,))
        for target in targets
        if within(target, ("django", "django_htmx", "annotator"))
        or (within(target, ("evaluation",)) and not within(target, PURE))
    }
    assert not wrong, sorted(wrong)


def test_the_rule_reads_real_imports() -> None:
    """The walker finds a known import of each kind, so the tests above cannot pass on nothing."""
    assert "annotator.web.http" in GRAPH["annotator.web.access"]  # module level
    assert "evaluation.formats" in GRAPH["annotator.pools.files"]
    assert "annotator.web.converters" in GRAPH["annotator.apps"]  # inside a method
