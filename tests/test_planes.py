"""The planes of DESIGN.md, as imports: each package of `seq` imports only the planes listed for it
here, so there is no cycle between planes and no import against the design's direction.

Imports inside functions count (they are dependencies all the same); imports under
`if TYPE_CHECKING:` do not (they are annotations only).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import seq

SRC = Path(seq.__file__).resolve().parent

# Any plane may import these: errors, the version, lazy exports, and the statistics (which import
# only errors and lazy exports).
FOUNDATION = {"errors", "_version", "_lazy", "stats"}
# plane -> the planes it may import (besides itself and the foundation), from the bottom up
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
    "deployment": {"record", "registry", "engine"},  # seq.deploy: register, then check (issue 24)
    "shelf": {"seq", "authoring", "capture"},  # built-in benchmarks, written as a user writes them
    "cli": {"seq", "authoring", "tf", "record", "capture", "isolation", "registry", "serving", "engine",
            "report", "eval", "image", "volume", "secret", "grid", "console", "scheduling", "port",
            "deployment", "evolve"},
    "grid": {"seq", "record", "eval"},  # on top: drives seq.eval.run and reads its reports
    "seqbench": {"report", "cli"},  # its own CLI reuses seq's seed-range parsing
    "console": {"record", "capture", "report"},  # the web console reads the record, never the engine
    "scheduling": {"record", "registry", "engine", "report", "eval"},  # scheduled evals drive seq.eval
    "port": {"authoring", "isolation", "record", "registry"},  # loads benchmarks as a user's file would
    # on top: runs evals; reruns chosen work items (engine); its HTML uses the report's plots
    "evolve": {"authoring", "record", "capture", "registry", "eval", "engine", "report"},
}  # fmt: skip


def _plane(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[0] if len(parts) > 1 or parts[0] in ALLOWED else "seq"


def _imports(tree: ast.Module) -> list[tuple[str, int]]:
    """(module, line) of every import, leaving out the bodies of `if TYPE_CHECKING:`."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _edges() -> list[tuple[str, str, str]]:
    """(from plane, to plane, where) for every import of one plane by another."""
    edges = []
    for path in sorted(SRC.rglob("*.py")):
        source = _plane(path)
        for module, line in _imports(ast.parse(path.read_text())):
            if module != "seq" and not module.startswith("seq."):
                continue
            target = module.split(".")[1] if "." in module else "seq"
            stats_reach = source == "stats" and target not in {"errors", "_lazy"}
            if target != source and (target not in FOUNDATION or stats_reach):
                edges.append((source, target, f"{path.relative_to(SRC.parent)}:{line} imports {module}"))
    return edges


def test_the_allowed_arrows_have_no_cycle():
    graphlib.TopologicalSorter({plane: targets - {"seq"} for plane, targets in ALLOWED.items()}).prepare()


def test_every_package_is_a_known_plane():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.glob("*.py")} - {"__init__"} - FOUNDATION
    assert packages | modules <= set(ALLOWED), (packages | modules) - set(ALLOWED)


def test_imports_follow_the_design():
    # `seq/__init__.py` is the flat API over every plane; it imports each on first use
    wrong = [where for source, target, where in _edges() if source != "seq" and target not in ALLOWED[source]]
    assert not wrong, "imports against the planes:\n" + "\n".join(wrong)
