"""The planes of `seq`, as imports: each package imports only the planes listed for it here, so
there is no cycle between planes and no import against their direction (the README's layout
table describes each plane).

Every import counts: inside functions, under `if TYPE_CHECKING:` (an annotation's import is a
dependency of the reader all the same), and relative ones (`from ..record import store`). Inside a
plane, `import seq` (the flat API, whose lazy exports reach every plane) is refused: a plane names
the module it uses; and no two modules of one package import each other, directly or around a
loop.
"""

from __future__ import annotations

import ast
import graphlib
import textwrap
from pathlib import Path

import pytest

import seq

SRC = Path(seq.__file__).resolve().parent

# Any plane may import these: errors, the version, lazy exports, and the statistics (which import
# only errors and lazy exports).
FOUNDATION = {"errors", "_version", "_lazy", "stats"}
# plane -> the planes it may import (besides itself and the foundation), from the bottom up;
# "seq" is the flat API (`import seq`)
ALLOWED: dict[str, set[str]] = {
    "stats": set(),
    "tf": set(),
    "authoring": {"tf"},
    "record": {"authoring"},
    "capture": {"authoring", "record"},
    "isolation": {"authoring", "record"},
    "registry": {"authoring", "tf", "record", "isolation"},
    "serving": {"authoring", "tf", "record", "registry"},
    "engine": {"authoring", "tf", "record", "capture", "isolation", "registry", "serving"},
    "report": {"record"},  # reads the record, never the engine
    # the Python API: seq.eval, and the twins of `seq image / volume / secret`
    "eval": {"authoring", "record", "registry", "engine", "report", "serving"},
    "image": {"authoring", "isolation", "record", "registry"},
    "volume": {"isolation", "record"},
    "secret": {"isolation", "record"},
    "deployment": {"record", "registry", "engine"},  # seq.deploy: register, then check
    # built-in benchmarks and policies, written as a user writes them: `import seq` is their API,
    # and a Warp port runs on the port plane's worlds and controllers as a scaffolded port does
    "shelf": {"seq", "authoring", "capture", "port"},
    "cli": {"authoring", "tf", "record", "capture", "isolation", "registry", "serving", "engine",
            "report", "eval", "image", "volume", "secret", "grid", "console", "scheduling", "port",
            "deployment", "evolve", "seqbench"},
    "__main__": {"cli"},  # `python -m seq`: the command itself
    # on top: drives seq.eval.run with arms (engine) and reads policies' declarations (registry)
    "grid": {"record", "registry", "engine", "eval"},
    "seqbench": {"report"},  # its command line (`seqbench`) is in the CLI plane
    "console": {"record", "capture", "report"},  # the web console reads the record, never the engine
    "scheduling": {"record", "registry", "engine", "report", "eval"},  # scheduled evals drive seq.eval
    "port": {"authoring", "isolation", "record", "registry"},  # loads benchmarks as a user's file would
    # on top: runs evals; reruns chosen work items (engine); its HTML uses the report's plots
    "evolve": {"authoring", "record", "capture", "registry", "eval", "engine", "report"},
}  # fmt: skip


def _plane(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return parts[0] if len(parts) > 1 or parts[0] in ALLOWED else "seq"


def _package(path: Path, root: Path) -> list[str]:
    """The dotted package a module's relative imports start from: `seq.record` for record/store.py."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return [root.name, *parts[:-1]]


def imports(path: Path, root: Path) -> list[tuple[str, int]]:
    """(absolute module, line) of every import in a module: in functions, under `if TYPE_CHECKING:`,
    and relative ones resolved against the module's package."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package(path, root)
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return sorted(found, key=lambda pair: pair[1])


def edges(root: Path) -> list[tuple[str, str, str]]:
    """(from plane, to plane, where) for every import of one plane by another under `root` (a
    copy of the `seq` package's folder)."""
    found = []
    name = root.name
    for path in sorted(root.rglob("*.py")):
        source = _plane(path, root)
        for module, line in imports(path, root):
            if module != name and not module.startswith(f"{name}."):
                continue
            target = module.split(".")[1] if "." in module else "seq"
            stats_reach = source == "stats" and target not in {"errors", "_lazy"}
            if target != source and (target not in FOUNDATION or stats_reach):
                found.append((source, target, f"{path.relative_to(root.parent)}:{line} imports {module}"))
    return found


def against_the_planes(root: Path) -> list[str]:
    """Every import under `root` that its plane may not make (`seq/__init__.py`, the flat API over
    every plane, imports each on first use)."""
    return [
        where for source, target, where in edges(root) if source != "seq" and target not in ALLOWED[source]
    ]


def plane_cycles(root: Path) -> list[str]:
    """The planes that import each other, directly or around a loop (empty: none)."""
    graph: dict[str, set[str]] = {}
    for source, target, _ in edges(root):
        if "seq" not in (source, target):
            graph.setdefault(source, set()).add(target)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


def module_cycles(root: Path) -> set[frozenset[str]]:
    """The modules of one package that import each other, directly or around a loop, as paths
    under `root`; every import counts, as between planes."""
    name = root.name
    modules = {
        ".".join([name, *path.relative_to(root).with_suffix("").parts]): path
        for path in root.rglob("*.py")
        if path.name != "__init__.py"
    }
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, path in modules.items():
        for target, _ in imports(path, root):
            same_package = target.rpartition(".")[0] == module.rpartition(".")[0]
            if target in modules and target != module and same_package:
                graph[module].add(target)
    cycles = set()
    for members in _strongly_connected(graph):
        if len(members) > 1:
            cycles.add(frozenset(str(modules[m].relative_to(root)) for m in members))
    return cycles


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of `graph`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return components


def test_the_allowed_arrows_have_no_cycle():
    graphlib.TopologicalSorter({plane: targets - {"seq"} for plane, targets in ALLOWED.items()}).prepare()


def test_every_package_is_a_known_plane():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.glob("*.py")} - {"__init__"} - FOUNDATION
    assert packages | modules <= set(ALLOWED), (packages | modules) - set(ALLOWED)


def test_imports_follow_the_planes():
    wrong = against_the_planes(SRC)
    assert not wrong, "imports against the planes:\n" + "\n".join(wrong)


def test_no_two_planes_import_each_other():
    assert plane_cycles(SRC) == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    package = root / "seq"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return package


@pytest.mark.parametrize(
    ("record_module", "found"),
    [
        ("from ..engine import runner\n", "seq/record/planted.py:1 imports seq.engine"),
        (
            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
            "    from seq.engine.runner import Runner\n",
            "seq/record/planted.py:4 imports seq.engine.runner",
        ),
        ("def later():\n    from seq.engine import runner\n", "seq/record/planted.py:2 imports seq.engine"),
    ],
    ids=["relative", "type-checking", "in-a-function"],
)
def test_a_planted_cycle_is_found(tmp_path, record_module, found):
    package = _tree(
        tmp_path,
        {
            "record/__init__.py": "",
            "record/planted.py": record_module,
            "engine/__init__.py": "",
            "engine/runner.py": "from seq.record import store\n",
        },
    )
    assert against_the_planes(package) == [found]
    assert set(plane_cycles(package)) == {"record", "engine"}


def test_the_flat_api_is_refused_inside_a_plane(tmp_path):
    package = _tree(tmp_path, {"grid/__init__.py": "", "grid/cells.py": "import seq\n"})
    assert against_the_planes(package) == ["seq/grid/cells.py:1 imports seq"]


def test_no_modules_of_one_package_import_each_other():
    assert module_cycles(SRC) == set()


def test_a_planted_module_cycle_hidden_in_a_function_is_found(tmp_path):
    package = _tree(
        tmp_path,
        {
            "record/__init__.py": "",
            "record/store.py": "from seq.record.logs import prune\n",
            "record/logs.py": "def prune(store):\n    from seq.record.store import Store\n",
            "record/paths.py": "from seq.record.store import Store\n",
        },
    )
    assert module_cycles(package) == {frozenset({"record/store.py", "record/logs.py"})}
