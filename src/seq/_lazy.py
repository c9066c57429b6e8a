"""Names a package exports, imported on first use (PEP 562): `import seq` or `import seq.stats`
costs milliseconds, and a worker process loads only the planes it touches."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, MutableMapping
from typing import Any


def lazy_exports(
    namespace: MutableMapping[str, Any], exports: Mapping[str, str], submodules: Collection[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of the package whose `globals()` is `namespace`: each name of
    `exports` comes from its module (and is kept there after), each of `submodules` is imported."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports) | set(submodules))

    return __getattr__, __dir__
