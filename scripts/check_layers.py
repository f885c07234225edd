"""The import-layer contract of the `webapp` package, checked from the source (no imports run).

Fails on: any import cycle between modules; an import from a lower layer up into a higher one, or
between sibling areas of one layer; an import inside a function outside the composition root; a
module no layer names; Flask reached by importing the pure process library; and a test module
imported by another module of the tests.
Imports under `if TYPE_CHECKING:` count like any other: a type is a dependency too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "webapp"

# Lowest first. A module may import its own layer and those below it; in a layer marked
# `siblings_apart`, one area may not import another (the blueprints stand side by side).
LAYERS: list[tuple[str, tuple[str, ...], bool]] = [
    ("process", ("webapp.process",), False),
    (
        "infrastructure",
        ("webapp.config", "webapp.extensions", "webapp.infra", "webapp.inputs"),
        False,
    ),
    ("models", ("webapp.models", "webapp.permissions"), False),
    ("engine", ("webapp.engine",), False),
    ("services", ("webapp.services",), False),
    ("adapters", ("webapp.tools", "webapp.worker"), True),
    ("web", ("webapp.web",), False),
    (
        "blueprints",
        (
            "webapp.home",
            "webapp.auth",
            "webapp.admin",
            "webapp.api",
            "webapp.designer",
            "webapp.inbox",
            "webapp.operations",
        ),
        True,
    ),
    ("composition root", ("webapp", "webapp.app", "webapp.cli", "webapp.plugins"), False),
]

# Only the composition root may import late: it wires the layers together at start-up.
LATE_IMPORTS_ALLOWED = ("webapp", "webapp.app", "webapp.cli")

# Modules below these layers must not import a web framework themselves.
NO_FLASK = ("webapp.process", "webapp.engine")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    late: bool


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _targets(module: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [f"{prefix}.{alias.name}" for alias in node.names] + [prefix]


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[Import] = []

    def owner(name: str) -> str | None:
        while name:
            if name in modules:
                return name
            name = name.rpartition(".")[0]
        return None

    def visit(node: ast.AST, late: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                names = _targets(module, child, path.name == "__init__.py")
                if isinstance(child, ast.ImportFrom):
                    # `from pkg import submodule` depends on the submodule; `from pkg import name`
                    # on the package.
                    prefix = names[-1]
                    names = [n for n in names[:-1] if n in modules] or [prefix]
                targets = {owner(name) for name in names} - {module}
                for target in sorted(t for t in targets if t) or ([names[-1]] if late else []):
                    found.append(Import(module, target, child.lineno, late))
            inner = late or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            visit(child, inner)

    visit(tree, False)
    return found


def layer_of(module: str) -> tuple[int, str] | None:
    best: tuple[int, str, int] | None = None
    for index, (_name, prefixes, _apart) in enumerate(LAYERS):
        for prefix in prefixes:
            # The package itself is the composition root; its modules are placed one by one.
            inside = prefix != PACKAGE and module.startswith(prefix + ".")
            if (module == prefix or inside) and (best is None or len(prefix) > best[2]):
                best = (index, prefix, len(prefix))
    return (best[0], best[1]) if best else None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def problems(root: Path) -> list[str]:
    modules = module_names(root)
    edges: dict[str, set[str]] = defaultdict(set)
    found: list[str] = []
    for module, path in modules.items():
        edges[module]
        place = layer_of(module)
        if place is None:
            found.append(f"{path}: module {module} belongs to no layer (add it to LAYERS)")
        for item in imports_of(module, path, modules):
            if item.target in modules:
                edges[module].add(item.target)
            where = f"{path}:{item.line}"
            if item.late and module not in LATE_IMPORTS_ALLOWED:
                found.append(f"{where}: import of {item.target} inside a function")
            target_place = layer_of(item.target)
            if place is None or target_place is None or item.target == PACKAGE:
                continue
            if target_place[0] > place[0]:
                found.append(
                    f"{where}: {module} ({LAYERS[place[0]][0]}) imports {item.target} "
                    f"from the higher layer {LAYERS[target_place[0]][0]}"
                )
            elif target_place[0] == place[0] and LAYERS[place[0]][2] and target_place != place:
                found.append(f"{where}: area {place[1]} imports the sibling area {target_place[1]}")
    for component in cycles(edges):
        found.append(f"import cycle of {len(component)} modules: {' -> '.join(component)}")
    found.extend(_framework_imports(modules))
    return found


def _framework_imports(modules: dict[str, Path]) -> list[str]:
    found = []
    for module, path in modules.items():
        if not any(module == p or module.startswith(p + ".") for p in NO_FLASK):
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            for name in names:
                if name.split(".")[0] in {"flask", "flask_login", "flask_wtf", "werkzeug"}:
                    found.append(
                        f"{path}:{node.lineno}: {module} imports the web framework ({name})"
                    )
    return found


def imported_test_modules(tests: Path) -> list[str]:
    """A test module is no library: shared code lives in tests/helpers or a conftest."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                parts = name.split(".")
                module = tests.parent.joinpath(*parts).with_suffix(".py")
                if parts[0] == "tests" and parts[-1].startswith("test_") and module.exists():
                    found.append(f"{path}:{node.lineno}: imports the test module {name}")
                    break
    return found


def process_loads_no_flask(root: Path) -> list[str]:
    """Import every module of the pure library in a fresh interpreter and look for Flask."""
    names = [
        m for m in module_names(root) if m == "webapp.process" or m.startswith("webapp.process.")
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'flask', 'sqlalchemy', 'flask_sqlalchemy', 'redis', 'rq'})\n"
        "print(' '.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root.parent, capture_output=True, text=True, check=False
    )
    if result.returncode:
        return [f"importing webapp.process failed: {result.stderr.strip().splitlines()[-1]}"]
    loaded = sorted({name.split(".")[0] for name in result.stdout.split()})
    return [f"importing webapp.process loads {', '.join(loaded)}"] if loaded else []


def main() -> int:
    root = Path(__file__).resolve().parent.parent / PACKAGE
    found = problems(root) + process_loads_no_flask(root)
    found += imported_test_modules(root.parent / "tests")
    for line in found:
        print(line)
    print(f"layer contract: {len(found)} problem(s) in {len(module_names(root))} modules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
