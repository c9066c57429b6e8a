"""Adapters in the registry: what `seq deploy` checks, and the twins of `seq adapter ls / show /
pull / check / rm`.

An adapter file is one file of at most 256 KB that imports only numpy, `seq.tf` (and from `seq`
only `adapter`, `Adapter` and `tf`) and the standard library. Every transform it labels lossless
must pass the round trip of `seq.tf.check` on the samples its `observation_spec` / `action_spec`
declare and on the transforms' own examples — when it is registered, and again when an eval starts
(then also on the benchmark's real observation, see `seq.engine.observation_fit`).
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from seq.authoring.adapter import SPEC_ATTRIBUTE, Adapter, AdapterSpec, adapter_spec_of
from seq.authoring.begin import EpisodeStart
from seq.errors import SeqInputError
from seq.record.store import RUNNING, EvalRow, Store, VersionRow
from seq.registry.builtins import BUILTIN_ADAPTERS, builtin_adapter_file
from seq.registry.loader import load_class
from seq.tf.base import Transform
from seq.tf.check import check_chain
from seq.tf.spec import parse_spec, synthetic

KIND = "adapter"
ATTRIBUTES = ("obs_transforms", "action_transforms", "episode_transforms")
MAX_BYTES = 256 * 1024
SEQ_NAMES = frozenset({"adapter", "Adapter", "tf"})
SAMPLES = 3  # synthetic samples drawn from a declared spec


# -- the file --------------------------------------------------------------------------------------
def _allowed_module(name: str) -> bool:
    top = name.split(".")[0]
    return (
        top == "numpy"
        or name == "seq.tf"
        or name.startswith("seq.tf.")
        or (top != "seq" and top in sys.stdlib_module_names)
    )


def _refuse_import(path: Path | str, line: int, name: str) -> SeqInputError:
    return SeqInputError(
        f"{path}:{line}: an adapter may import only numpy, seq.tf and the standard library, "
        f"and it imports {name!r}."
    )


def check_adapter_source(path: Path | str, data: bytes) -> ast.Module:
    """Refuse a file over 256 KB, or one that imports anything but numpy, `seq.tf` (and `seq` for
    `seq.adapter` / `seq.Adapter` / `seq.tf`) and the standard library, naming the import."""
    if len(data) > MAX_BYTES:
        raise SeqInputError(
            f"{path}: an adapter file is at most 256 KB, and this one is {len(data) / 1024:.0f} KB."
        )
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError as error:
        raise SeqInputError(f"{path}:{error.lineno}: syntax error: {error.msg}.") from None
    seq_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "seq" or (
                    _allowed_module(alias.name) and alias.name.startswith("seq.") and not alias.asname
                ):
                    seq_names.add(alias.asname or "seq")
                elif not _allowed_module(alias.name):
                    raise _refuse_import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                names = ", ".join(alias.name for alias in node.names)
                raise _refuse_import(path, node.lineno, "." * node.level + (module or names))
            if module == "seq":
                for alias in node.names:
                    if alias.name not in SEQ_NAMES:
                        raise _refuse_import(path, node.lineno, f"seq.{alias.name}")
            elif not _allowed_module(module):
                raise _refuse_import(path, node.lineno, module)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in seq_names
            and node.attr not in SEQ_NAMES
        ):
            raise SeqInputError(
                f"{path}:{node.lineno}: an adapter may use only seq.adapter, seq.Adapter and seq.tf, "
                f"and it uses seq.{node.attr}."
            )
    return tree


def declares_adapter(data: bytes) -> bool:
    """Whether a file (that parses) has a class decorated `@seq.adapter` / `@adapter` or based on
    `Adapter`: such a file gets the adapter checks before it is imported."""
    try:
        tree = ast.parse(data)
    except SyntaxError:
        return False

    def named(node: ast.expr, name: str) -> bool:
        node = node.func if isinstance(node, ast.Call) else node
        return (isinstance(node, ast.Attribute) and node.attr == name) or (
            isinstance(node, ast.Name) and node.id == name
        )

    return any(
        isinstance(node, ast.ClassDef)
        and (
            any(named(d, "adapter") for d in node.decorator_list)
            or any(named(b, "Adapter") for b in node.bases)
        )
        for node in ast.walk(tree)
    )


# -- an instance, and its labels -------------------------------------------------------------------
def _transforms(instance: Adapter, attribute: str, where: str) -> list[Transform]:
    value = getattr(instance, attribute, ())
    if not isinstance(value, list | tuple):
        raise SeqInputError(
            f"{where}: {attribute} must be a list of seq.tf transforms, got {type(value).__name__}."
        )
    for index, transform in enumerate(value):
        if not isinstance(transform, Transform):
            raise SeqInputError(
                f"{where}: {attribute}[{index}] ({transform!r}) is not a seq.tf transform; "
                "wrap a function with seq.tf.custom(...)."
            )
    return list(value)


def instantiate(cls: type, parameters: Mapping[str, Any] | None = None, where: str | None = None) -> Adapter:
    """An adapter built with its declared defaults, overridden by `parameters`, its lists validated."""
    spec = adapter_spec_of(cls)
    where = where or f"adapter {spec.name!r}"
    values = {p.name: p.default for p in spec.parameters.values()}
    values.update(parameters or {})
    try:
        instance = cls(**values)
    except SeqInputError as error:
        raise SeqInputError(f"{where}: {error}") from None
    except Exception as error:
        raise SeqInputError(f"{where}: __init__ raised {type(error).__name__}: {error}") from None
    for attribute in ATTRIBUTES:
        _transforms(instance, attribute, where)
    return instance


def describe_transforms(instance: Adapter) -> dict[str, Any]:
    """Every transform with its label, and the lossy ones with their reasons (for show and the report)."""
    out: dict[str, Any] = {attribute: [] for attribute in ATTRIBUTES} | {"lossy": []}
    for attribute in ATTRIBUTES:
        for index, transform in enumerate(getattr(instance, attribute)):
            entry = {"where": f"{attribute}[{index}]", **transform.describe()}
            out[attribute].append(entry)
            if entry["lossy"]:
                out["lossy"].append(entry)
    return out


def check_instance(
    instance: Adapter, where: str, observations: list[Any] | None = None, on: str = ""
) -> list[Any]:
    """Check every lossless label of an adapter: its obs transforms on `observations` (a benchmark's
    real ones, at eval start) and on samples of its `observation_spec`, its action transforms on
    samples of its `action_spec`, each also on its own examples. Returns the observations as the
    policy would see them; refuses the first transform that fails, naming it."""
    rng = np.random.default_rng(0)
    results: list[Any] = []
    episode = EpisodeStart(task="task", suite="suite", instruction="do the task", seed=0, task_index=0)
    for attribute, spec_name, given in (
        ("obs_transforms", "observation_spec", list(observations or [])),
        ("action_transforms", "action_spec", []),
        ("episode_transforms", None, [episode.to_dict()]),
    ):
        declared = getattr(instance, spec_name, None) if spec_name else None
        samples = list(given)
        if declared is not None:
            samples += synthetic(parse_spec(declared, f"{where}: {spec_name}"), rng, SAMPLES)
        outputs, failure = check_chain(_transforms(instance, attribute, where), samples, rng)
        if failure is not None:
            raise SeqInputError(
                f"{where}: {attribute}[{failure.index}] {failure.transform} fails its check{on}: "
                f"{failure.reason}."
            )
        if attribute == "obs_transforms":
            results = outputs[: len(given)]
    return results


def verify_class(cls: type, where: str) -> dict[str, Any]:
    """What `seq deploy` stores with an adapter's version, after checking it with its defaults:
    its declared parameters, every transform and label, and whether it is lossy."""
    spec = adapter_spec_of(cls)
    instance = instantiate(cls, where=where)
    check_instance(instance, where)
    described = describe_transforms(instance)
    return {**spec.describe(), **described, "is_lossy": bool(described["lossy"])}


def adapter_declared(cls: type, spec: AdapterSpec, path: Path | str, data: bytes) -> dict[str, Any]:
    """`seq deploy`'s checks of one adapter class in a file: the file's size and imports, then its labels."""
    check_adapter_source(path, data)
    return verify_class(cls, f"{path}: adapter {spec.name!r}")


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
        from seq.registry.deploy import deploy

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
        from seq.registry.deploy import deploy

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
        from seq.registry.deploy import _import_user_file

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
