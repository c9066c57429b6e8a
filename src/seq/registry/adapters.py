"""Adapters in the registry: their versions (resolved, loaded, listed, removed), the twins of
`seq adapter ls / show / pull / check / rm`. What registering one checks is in
`seq.registry.adapter_checks`.
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seq.authoring.adapter import SPEC_ATTRIBUTE, Adapter, AdapterSpec, adapter_spec_of
from seq.errors import SeqInputError
from seq.record.store import RUNNING, EvalRow, Store, VersionRow
from seq.registry.adapter_checks import check_adapter_source, instantiate, verify_class
from seq.registry.builtins import BUILTIN_ADAPTERS, builtin_adapter_file
from seq.registry.deploy import _import_user_file, deploy
from seq.registry.loader import load_class

KIND = "adapter"


# -- versions --------------------------------------------------------------------------------------
def _parse_target(target: str) -> tuple[str, int | None]:
    name, _, version = str(target).partition("@")
    if not version:
        return name, None
    if not (version.startswith("v") and version[1:].isdigit()):
        raise SeqInputError(f"adapter {target!r}: a version is written NAME@vN, such as {name}@v1.")
    return name, int(version[1:])


def resolve_adapter(target: Any, store: Store, version: int | str | None = None) -> VersionRow:
    """The registered version `NAME@vN` (or `NAME` and `version`), else the latest live one; an
    `@seq.adapter` class is registered from its file first (as `seq deploy FILE:Class`)."""
    if isinstance(target, type):
        adapter_spec_of(target)
        source = inspect.getsourcefile(target)
        if source is None:
            raise SeqInputError(f"{target.__name__}: its source file cannot be found; define it in a file.")
        (deployed,) = deploy(f"{source}:{target.__qualname__}", store)
        return deployed.version
    name, number = _parse_target(target)
    if version is not None:
        number = int(str(version).lstrip("v"))
    if number is None and name in BUILTIN_ADAPTERS:
        (deployed,) = deploy(builtin_adapter_file(name), store)
        return deployed.version
    if number is not None:
        row = store.version(KIND, name, number)
        if row is None:
            raise SeqInputError(f"adapter {name}@v{number}: no such version is registered (seq adapter ls).")
        if row.removed_at is not None:
            raise SeqInputError(f"adapter {name}@v{number} was removed with seq adapter rm.")
        return row
    rows = store.versions(KIND, name)
    if rows:
        return rows[-1]
    known = sorted({row.name for row in store.versions(KIND)} | set(BUILTIN_ADAPTERS))
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else f" Registered: {', '.join(known) or 'none'}."
    raise SeqInputError(f"unknown adapter {name!r}.{hint}")


def stored_bytes(row: VersionRow) -> bytes:
    """The exact file registered as this version, checked against its sha256."""
    path = Path(row.ref["path"])
    if not path.is_file():
        raise SeqInputError(f"adapter {row.label}: its stored file {path} is missing.")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != row.sha256:
        raise SeqInputError(
            f"adapter {row.label}: its stored file {path} no longer holds the registered code."
        )
    return data


def adapter_source(name: str, version: int | str | None = None, store: Store | None = None) -> str:
    """The source of a registered adapter version (default: the latest), exactly as it was deployed."""
    return stored_bytes(resolve_adapter(name, store or Store(), version)).decode("utf-8")


def load_adapter(ref: Mapping[str, Any], parameters: Mapping[str, Any] | None = None) -> Adapter:
    """An adapter instance from a version's `ref`, with an eval's parameter values (in a worker)."""
    path = Path(ref["path"])
    if hashlib.sha256(path.read_bytes()).hexdigest() != ref["sha256"]:
        raise SeqInputError(f"adapter file {path} no longer holds the registered code.")
    return instantiate(load_class(dict(ref)), parameters)


def adapter_spec(row: VersionRow) -> AdapterSpec:
    """The declared parameters of a registered version (its class, loaded)."""
    return adapter_spec_of(load_class(row.ref))


def _summary(row: VersionRow) -> dict[str, Any]:
    declared = row.declared
    return {
        "name": row.name,
        "version": row.version,
        "label": row.label,
        "sha256": row.sha256,
        "file": row.ref.get("file"),
        "created_at": row.created_at,
        "lossy": bool(declared.get("is_lossy")),
        "lossy_transforms": [
            {"where": e["where"], "transform": e["transform"], "reason": e["reason"]}
            for e in declared.get("lossy", [])
        ],
    }


def adapters(store: Store | None = None) -> list[dict[str, Any]]:
    """Registered adapters, each with its latest version and whether it is lossy."""
    store = store or Store()
    latest: dict[str, VersionRow] = {row.name: row for row in store.versions(KIND)}
    return [_summary(latest[name]) for name in sorted(latest)]


def show_adapter(target: str, store: Store | None = None) -> dict[str, Any]:
    """One version (`NAME[@vN]`, default the latest): its labels, parameters, and why it is lossy."""
    store = store or Store()
    row = resolve_adapter(target, store)
    return {
        **_summary(row),
        "versions": [r.version for r in store.versions(KIND, row.name)],
        "parameters": row.declared.get("parameters", {}),
        "obs_transforms": row.declared.get("obs_transforms", []),
        "action_transforms": row.declared.get("action_transforms", []),
        "episode_transforms": row.declared.get("episode_transforms", []),
    }


def check_adapter(target: str | Path, store: Store | None = None) -> list[dict[str, Any]]:
    """Check again, without registering: a file's adapters (`target` an existing path), or a
    registered version `NAME[@vN]` (its stored file's hash, size, imports and labels)."""
    path = Path(str(target))
    if path.is_file():
        data = path.read_bytes()
        check_adapter_source(path, data)
        module, _, _ = _import_user_file(path, data)
        found = [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and value.__module__ == module.__name__
            and isinstance(value.__dict__.get(SPEC_ATTRIBUTE), AdapterSpec)
        ]
        if not found:
            raise SeqInputError(f"{path}: defines no class decorated with @seq.adapter.")
        results = []
        for cls in found:
            spec = adapter_spec_of(cls)
            declared = verify_class(cls, f"{path}: adapter {spec.name!r}")
            results.append({"name": spec.name, "label": spec.name, "lossy": declared["is_lossy"]})
        return results
    row = resolve_adapter(str(target), store or Store())
    data = stored_bytes(row)
    check_adapter_source(row.ref.get("file") or row.ref["path"], data)
    declared = verify_class(load_class(row.ref), f"adapter {row.label}")
    return [{"name": row.name, "label": row.label, "lossy": declared["is_lossy"]}]


def adapters_held(row: EvalRow) -> set[str]:
    """The adapter names an eval runs: from its manifest (`adapter`, or each arm's `adapter`)."""
    pins = [row.manifest.adapter, *(arm.adapter for arm in row.manifest.arms)]
    found = {pin.name for pin in pins if pin is not None}
    if row.arguments.adapter:
        found.add(_parse_target(row.arguments.adapter)[0])
    return found


def remove_adapter(name: str, store: Store | None = None) -> int:
    """Remove every version of an adapter; its numbers are never given again. Refused while a
    running eval holds it."""
    store = store or Store()
    if "@" in name:
        raise SeqInputError(
            f"seq adapter rm {name}: it removes every version of a name; give the name alone."
        )
    if not store.versions(KIND, name):
        raise SeqInputError(f"no registered adapter is named {name!r} (seq adapter ls lists them).")
    running = [row.id for row in store.evals() if row.status == RUNNING and name in adapters_held(row)]
    if running:
        raise SeqInputError(f"adapter {name!r} is in use by running eval(s) {', '.join(running)}.")
    return store.remove_versions(KIND, name)
