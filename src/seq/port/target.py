"""What `seq benchmark export` exports: a benchmark from `FILE[:Class]` or by name."""

from __future__ import annotations

import hashlib
from pathlib import Path

from seq.authoring.benchmark import BenchmarkSpec, spec_of
from seq.errors import SeqInputError


def load_benchmark(target: str) -> tuple[type, BenchmarkSpec]:
    """The benchmark class and its spec: `path.py`, `path.py:Class`, or a deployed/built-in name."""
    file, _, class_name = target.partition(":") if ".py" in target else (target, "", "")
    if file.endswith(".py"):
        return _from_file(Path(file), class_name or None)
    from seq.record.store import Store
    from seq.registry.deploy import load_version, resolve

    cls = load_version(resolve("benchmark", target, Store()))
    return cls, spec_of(cls)


def _from_file(path: Path, class_name: str | None) -> tuple[type, BenchmarkSpec]:
    from seq.registry.loader import import_user_file

    if not path.is_file():
        raise SeqInputError(f"{path}: no such file; expected a Python file with a @seq.benchmark class.")
    data = path.read_bytes()
    module = import_user_file(path, data, path.resolve(), f"seq_port_{hashlib.sha256(data).hexdigest()[:16]}")
    found = {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, type) and value.__module__ == module.__name__ and _is_benchmark(value)
    }
    if class_name is not None:
        if class_name not in found:
            raise SeqInputError(
                f"{path}: no @seq.benchmark class {class_name!r}; it defines {sorted(found) or 'none'}."
            )
        return found[class_name], spec_of(found[class_name])
    if len(found) != 1:
        raise SeqInputError(
            f"{path}: expected one @seq.benchmark class (or FILE:Class), found {sorted(found) or 'none'}."
        )
    cls = next(iter(found.values()))
    return cls, spec_of(cls)


def _is_benchmark(cls: type) -> bool:
    try:
        spec_of(cls)
    except SeqInputError:
        return False
    return True
