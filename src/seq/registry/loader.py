"""Load a registered class from its reference: a module path (built-ins) or a stored file."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import weakref
from pathlib import Path
from typing import Any

from seq.errors import SeqInputError

_importing: list[Path] = []  # user files being imported right now (innermost last)

# Policy objects evaluated in the process that holds them (`seq.evaluate`); dropped with the caller's.
IN_MEMORY: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def importing_user_file() -> Path | None:
    """The user file whose top-level code is running now, if any."""
    return _importing[-1] if _importing else None


def module_name_for(sha256: str) -> str:
    return f"seq_user_{sha256[:16]}"


def import_file(path: Path, module_name: str, search_dir: str | None = None) -> Any:
    """Import a Python file as `module_name`; `search_dir` (the file's original folder) goes on
    `sys.path` so the file can import its neighbours."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    if search_dir and search_dir not in sys.path:
        sys.path.insert(0, search_dir)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SeqInputError(f"{path}: cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    _importing.append(path)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    finally:
        _importing.pop()
    return module


def load_class(ref: dict[str, Any]) -> type:
    """The class a version's `ref` points to: `{module, qualname}` or `{path, sha256, qualname}`."""
    if "in_memory" in ref:
        if not ref["in_memory"] or ref["in_memory"] not in IN_MEMORY:
            raise SeqInputError(
                f"{ref['qualname']} was evaluated from the memory of another process; only that process "
                "can run it (an eval of an in-memory policy cannot be resumed elsewhere)."
            )
        return type(IN_MEMORY[ref["in_memory"]])
    if "module" in ref:
        module = importlib.import_module(ref["module"])
    else:
        path = Path(ref["path"])
        if not path.exists():  # a record merged from another workspace: the file is kept here by hash
            from seq.record.store import seq_home

            path = seq_home() / "code" / f"{ref['sha256']}.py"
        module = import_file(path, module_name_for(ref["sha256"]), ref.get("origin_dir"))
    target: Any = module
    for part in ref["qualname"].split("."):
        target = getattr(target, part)
    return target
