"""The layers contract: gradc's packages import one way, and no module imports itself back.

Every ``import`` and ``from ... import`` statement counts, wherever it stands (inside
functions too): a lazy import that closes a circle is still a circle.

    version <- stages <- errors <- files <- tree_util <- ir <- ops <- trace <- transforms <- passes <- backends
        <- derivatives <- integrate <- api <- symbolic <- dask <- cli
    facade: on errors, files, ir, ops and api only; nothing below the top imports the facade
    torch (``import gradc.torch as torch``): the facade's public face, on the facade alone; only the top imports it
    backends/numpy and backends/c never import each other; backends/array_api is built on backends/numpy
    dask (data-parallel gradients, an optional extra) sits on api; only the top imports it, lazily
"""
from __future__ import annotations

import ast
import pathlib

import pytest

GRADC = pathlib.Path(__file__).resolve().parents[1] / "gradc"

ORDER = ["version", "stages", "errors", "files", "tree_util", "ir", "ops", "trace", "transforms", "passes",
         "backends", "derivatives", "integrate", "api", "symbolic", "dask", "cli"]
BUILT_ON = {("array_api", "numpy")}  # (target, the target whose emitted module it re-spells)
SHARED = {"escape", "checks", "display"}  # modules of gradc/backends every target uses (escaping, checks, HTML)
FACADE_MAY_IMPORT = {"errors", "files", "ir", "ops", "api", "facade"}
FACADE_FACE = "torch"  # gradc.torch: torch's names and module paths, all of them the facade's
TOP = {"", "__main__"}  # gradc/__init__.py and gradc/__main__.py assemble the public names


def module_names(root: pathlib.Path) -> dict:
    """``{"gradc.ir.graph": path, ...}`` for every module under ``root`` (a package directory)."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name,) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def import_graph(root: pathlib.Path) -> dict:
    """``{module: {(imported module, line), ...}}`` over every import statement of every module."""
    modules = module_names(root)

    def resolve(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                # ``from pkg import mod`` imports the module pkg.mod when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if target.split(".")[0] == root.name:
                    edges.add((resolve(target), node.lineno))
        graph[name] = edges
    return graph


def layer(module: str) -> str:
    """The package (or top-level module) a module belongs to: ``gradc.ops.shape`` -> ``ops``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (or a module importing itself)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(start):  # iterative Tarjan: no recursion limit on large trees
        work = [(start, iter(sorted(t for t, _ in graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(t for t, _ in graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                if len(component) > 1 or any(t == node for t, _ in graph[node]):
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def violations(graph: dict) -> list:
    """Imports that go against the layer order, as ``"a -> b (line n)"``."""
    bad = []
    for module, edges in sorted(graph.items()):
        source = layer(module)
        if source in TOP:
            continue
        for target, line in sorted(edges):
            dest = layer(target)
            if dest == source and source != "backends":
                continue
            if source == "backends" and dest == "backends":
                a, b = module.split(".")[2:3], target.split(".")[2:3]
                if a and b and a != b and not SHARED & {a[0], b[0]} and a[0] != "__init__" and (
                        a[0], b[0]) not in BUILT_ON:
                    bad.append(f"{module} -> {target} (line {line}): targets never import each other")
                continue
            if source == "facade":
                ok = dest in FACADE_MAY_IMPORT
            elif source == FACADE_FACE:
                ok = dest == "facade"
            elif dest in ("facade", FACADE_FACE) or dest in TOP:
                ok = False
            else:
                ok = source in ORDER and dest in ORDER and ORDER.index(dest) <= ORDER.index(source)
            if not ok:
                bad.append(f"{module} -> {target} (line {line})")
    return bad


def test_no_import_cycles():
    assert cycles(import_graph(GRADC)) == []


def test_imports_follow_the_layers():
    assert violations(import_graph(GRADC)) == []


def test_every_package_is_in_a_layer():
    packages = {layer(m) for m in module_names(GRADC)}
    assert packages <= set(ORDER) | {"facade", FACADE_FACE} | TOP


@pytest.mark.parametrize("files, expect_cycle, expect_violation", [
    ({"pkg/ir/a.py": "from pkg.ops import b\n", "pkg/ops/b.py": "x = 1\n"}, False, True),
    ({"pkg/ir/a.py": "def f():\n    import pkg.ir.b\n", "pkg/ir/b.py": "from pkg.ir import a\n"}, True, False),
    ({"pkg/ops/a.py": "from pkg.ir import b\n", "pkg/ir/b.py": "x = 1\n"}, False, False),
    ({"pkg/api.py": "from pkg.facade import t\n", "pkg/facade/t.py": "x = 1\n"}, False, True),
    ({"pkg/backends/numpy/a.py": "from pkg.backends.c import b\n", "pkg/backends/c/b.py": "x = 1\n"}, False, True),
    ({"pkg/backends/array_api/a.py": "from pkg.backends.numpy import b\n", "pkg/backends/numpy/b.py": "x = 1\n"},
     False, False),
    ({"pkg/backends/numpy/a.py": "from pkg.backends.array_api import b\n", "pkg/backends/array_api/b.py": "x = 1\n"},
     False, True),
    ({"pkg/api.py": "from pkg.dask import d\n", "pkg/dask/d.py": "x = 1\n"}, False, True),
    ({"pkg/dask/d.py": "from pkg.api import f\n", "pkg/api.py": "x = 1\n"}, False, False),
    ({"pkg/facade/a.py": "from pkg.trace import t\n", "pkg/trace/t.py": "x = 1\n"}, False, True),
    ({"pkg/facade/a.py": "from pkg.api import f\n", "pkg/api.py": "x = 1\n"}, False, False),
    ({"pkg/torch/__init__.py": "from pkg.facade import t\n", "pkg/facade/t.py": "x = 1\n"}, False, False),
    ({"pkg/torch/__init__.py": "from pkg.api import f\n", "pkg/api.py": "x = 1\n"}, False, True),
    ({"pkg/facade/a.py": "import pkg.torch\n", "pkg/torch/__init__.py": "x = 1\n"}, False, True),
    ({"pkg/api.py": "import pkg.torch\n", "pkg/torch/__init__.py": "x = 1\n"}, False, True),
])
def test_the_contract_catches_what_it_should(tmp_path, files, expect_cycle, expect_violation):
    """The checker itself, on small trees: upward imports, lazy cycles, facade and target rules."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    graph = import_graph(tmp_path / "pkg")
    assert bool(cycles(graph)) is expect_cycle
    assert bool(violations(graph)) is expect_violation
