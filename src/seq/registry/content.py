"""What a registered class's version hashes: the code that class runs, not its whole file.

A file often holds a benchmark and a policy together. Editing one must not make the other a new
version, yet editing a helper either of them calls must. The content of a class is its file's text
without the other registered classes (`@seq.benchmark`, `@seq.policy`, `@seq.adapter`) it does not
refer to, and without the `if __name__ == "__main__":` block (which does not run on import):

- its own source (decorators included);
- every other line of the module (imports, constants, helper functions, plain classes, comments);
- the registered classes it names (a base class, a policy its benchmark uses), and those they name.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable


def _span(node: ast.stmt) -> range:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return range(start, (node.end_lineno or node.lineno) + 1)


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either way round)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    texts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and texts == {"__main__"}


def _needed(name: str, classes: dict[str, ast.ClassDef], registered: set[str]) -> set[str]:
    """`name` and the registered classes it names, transitively."""
    needed, waiting = {name}, [name]
    while waiting:
        node = classes[waiting.pop()]
        for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & registered:
            if used in classes and used not in needed:
                needed.add(used)
                waiting.append(used)
    return needed


def class_content(source: str, name: str, registered: Iterable[str]) -> str:
    """The text a version of top-level class `name` hashes (see the module's doc); the whole source
    when `name` is not a class defined at the top of it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if name not in classes:
        return source
    others = set(registered) - _needed(name, classes, set(registered))
    dropped: set[int] = set()
    for node in tree.body:
        if (isinstance(node, ast.ClassDef) and node.name in others) or _is_main_guard(node):
            dropped.update(_span(node))
    lines = source.splitlines(keepends=True)  # blank lines change nothing a class runs: left out
    return "".join(line for number, line in enumerate(lines, 1) if number not in dropped and line.strip())


def content_sha256(source: str, name: str, registered: Iterable[str]) -> str:
    """The sha256 of `class_content`: the same for two files where the class runs the same code."""
    return hashlib.sha256(class_content(source, name, registered).encode()).hexdigest()
