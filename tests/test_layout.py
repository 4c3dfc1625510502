"""The folders show the architecture: imports run one way and there are no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def imports(path: Path) -> set[str]:
    """Modules ``path`` imports (at any depth: lazy imports inside functions count too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graph(*packages: str) -> dict[str, set[str]]:
    modules = {module_name(p): p for pkg in packages for p in (REPO / pkg).rglob("*.py")}
    return {name: {m for m in imports(path) if m in modules} for name, path in modules.items()}


def test_stages_never_import_the_orchestrator_evaluation_apps_or_cli():
    for name, deps in graph("postprocess").items():
        if name.startswith("postprocess.stages"):
            bad = [d for d in deps if d.startswith(("postprocess.pipeline", "postprocess.evaluation",
                                                    "postprocess.apps", "postprocess.cli"))]
            assert not bad, f"{name} imports {bad}"


def test_postprocess_imports_nothing_of_linkspider_but_its_contract():
    for path in (REPO / "postprocess").rglob("*.py"):
        linkspider = {m for m in imports(path) if m.split(".")[0] == "linkspider"}
        assert {m.removeprefix("linkspider.items.") for m in linkspider} <= {
            "linkspider.items", "PROSE_KINDS", "READABLE_VERSIONS", "TABLES"}, f"{path}: {linkspider}"


def test_linkspider_never_imports_postprocess():
    for path in (REPO / "linkspider").rglob("*.py"):
        assert not any(m.split(".")[0] == "postprocess" for m in imports(path)), path


def test_no_import_cycles():
    edges = graph("postprocess", "deploy")
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*trail, node, nxt]))
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [])
